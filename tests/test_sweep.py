"""npuemu.sweep: the same cases in this process, on a LocalCluster and on a scheduler and workers started as
separate processes, with the same results; failures as data; workers running other code refused.

The cluster tests share one LocalCluster of two single-threaded worker processes (started once per module).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sweep_helpers
from npuemu.errors import SweepError, WorkerVersionError
from npuemu.platform import get_platform, platforms
from npuemu.sweep import Case, kernel_cases, property_cases, sweep, tiling_cases
from npuemu.sweep.cases import TILING_SHAPES
from npuemu.profiles import PROFILES
from npuemu.sweep.engine import run_remote
from npuemu.sweep.versions import fingerprint

distributed = pytest.importorskip("distributed")
HERE = Path(__file__).resolve().parent
TILING = tiling_cases()


def _justified_refusal(message: str) -> bool:
    """A tiling may refuse only what needs more UB than the platform has."""
    m = re.search(r"needs (\d+) bytes of UB \((\d+) available", message)
    return m is not None and int(m[1]) > int(m[2])


# ------------------------------------------------------------------------------------------ in-process


def test_a_tiling_sweep_covers_every_bundled_function_platform_dtype_and_shape_class():
    names = set(PROFILES)        # the bundled platforms (other tests may have registered custom ones)
    assert len(names) >= 12 and names <= {p.name for p in platforms()}
    expected = sum(len(shapes) * 2 for shapes in TILING_SHAPES.values()) * len(names)
    assert len(TILING) == expected and len({c.id for c in TILING}) == expected
    assert {c.platform for c in TILING} == names and {c.target for c in TILING} == set(TILING_SHAPES)
    report = sweep(TILING, progress=False)
    assert report.ok, report.table()
    assert [r.case for r in report.results] == TILING                   # results in case order
    refused = [r for r in report.results if r.status == "refused"]
    # only the row kernels' 128 Ki-column rows, which no UB holds unsplit, are refused
    assert {(r.case.target, r.case.label) for r in refused} == {("row_tiling", "wide")}
    assert all(_justified_refusal(r.error.message) and r.error.error == "npuemu.errors.TilingError"
               for r in refused)
    for r in report.results:
        if r.case.target == "elementwise_tiling":
            p = get_platform(r.case.platform)
            blocks = -(-r.case.shape[0] * 2 // 32) if r.case.dtype == "float16" else -(-r.case.shape[0] * 4 // 32)
            assert r.detail == f"block_dim={min(p.aiv_count, blocks)} key=0", r.case.id


def test_a_case_that_faults_comes_back_with_class_rule_kernel_core_and_line():
    [result] = sweep([Case("kernel", "sweep_helpers:BROKEN", shape=(128,))], progress=False).results
    e = result.error
    assert result.status == "failed" and e.error == "npuemu.errors.BoundsError"
    assert (e.rule, e.kernel, e.core) == ("out of bounds", "overflowing_copy", "AIV 0")
    assert Path(e.file).name == "sweep_helpers.py" and e.line == sweep_helpers.BAD_LINE
    assert "holds only 256 bytes" in e.message


def test_a_property_case_reports_hypothesis_minimal_example():
    case = Case("property", "sweep_helpers:seventh_tiling", dtype="float16", examples=40, seed=3)
    [result] = sweep([case], progress=False).results
    assert result.status == "failed" and result.error.error == "npuemu.errors.TilingError"
    assert "block_dim must be an int in [1, 65535], got 0" in result.error.message
    assert "shape=(1,)" in result.error.example                     # shrunk to the smallest input
    # the bundled functions hold their properties
    good = sweep(property_cases(platforms=["Ascend910B4"], dtypes=["float16"], examples=15), progress=False)
    assert good.ok and {r.detail for r in good.results} == {"15 examples"}


def test_the_json_file_and_the_table(tmp_path):
    cases = tiling_cases(functions=["row_tiling"], platforms=["Ascend910B1"], dtypes=["float32"])
    cases.append(Case("kernel", "sweep_helpers:BROKEN", shape=(128,)))
    report = sweep(cases, progress=False)
    data = json.loads(report.write_json(tmp_path / "out" / "sweep.json").read_text())
    assert data["counts"] == {"passed": 4, "failed": 1, "refused": 1} and data["mode"] == "in-process"
    assert [r["case"]["id"] for r in data["results"]] == [c.id for c in cases]
    bad = data["results"][-1]
    assert bad["status"] == "failed" and bad["error"]["rule"] == "out of bounds"
    assert bad["error"]["line"] == sweep_helpers.BAD_LINE and bad["error"]["core"] == "AIV 0"
    table = report.table()
    assert "row_tiling" in table and "6 cases: 4 passed, 1 failed, 1 refused" in table
    assert "FAILED kernel:sweep_helpers:BROKEN" in table and "sweep_helpers.py:26" in table


def test_unknown_names_and_levels_are_usage_errors():
    from npuemu.errors import PlatformError, UsageError
    with pytest.raises(UsageError, match="unknown tiling function tile_it; the bundled ones are elementwise"):
        tiling_cases(functions=["tile_it"])
    with pytest.raises(PlatformError):
        tiling_cases(platforms=["Ascend000"])
    with pytest.raises(UsageError, match="unknown check level 'most'"):
        Case("kernel", "add", check="most")
    with pytest.raises(SweepError, match="give one of scheduler=, client= and local_workers="):
        sweep([], scheduler="tcp://127.0.0.1:1", local_workers=2)


def test_without_dask_a_sweep_runs_in_process_and_a_scheduler_asks_for_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)            # import distributed -> ImportError
    cases = TILING[:3]
    assert sweep(cases, progress=False).ok
    with pytest.raises(SweepError, match=r"needs dask.distributed.*pip install 'npuemu\[scaleout\]'"):
        sweep(cases, scheduler="tcp://127.0.0.1:8786", progress=False)


def test_a_worker_task_refuses_another_npuemu():
    other = {**fingerprint(), "npuemu": "0.0.1"}
    with pytest.raises(WorkerVersionError, match=r"runs other code than this client \(npuemu: worker 0\.1\.0, "
                                                 r"client 0\.0\.1\)"):
        run_remote(TILING[0], other, None)
    assert run_remote(TILING[0], fingerprint(), None).status == "passed"


# ------------------------------------------------------------------------------------- a LocalCluster


@pytest.fixture(scope="module")
def runs_file(tmp_path_factory):
    return tmp_path_factory.mktemp("sweep") / "runs.txt"


@pytest.fixture(scope="module")
def client(runs_file):
    """Two single-threaded worker processes; they inherit the tests' path, kernel cache and runs file."""
    env = {"PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
           sweep_helpers.RUNS_FILE: str(runs_file), sweep_helpers.DIE_FILE: str(runs_file.with_name("died.txt"))}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as c:
            yield c
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


def test_a_local_cluster_gives_the_same_results_as_one_process(client):
    here = sweep(TILING, progress=False)
    there = sweep(TILING, client=client, progress=False)
    assert there.outcomes() == here.outcomes() and len(there.results) == len(TILING)
    assert [r.case for r in there.results] == TILING
    assert there.workers == 2 and len({r.worker for r in there.results}) == 2     # both workers took cases
    assert all(r.worker.startswith("tcp://") for r in there.results)
    chunked = sweep(TILING, client=client, progress=False, chunk=50)          # 9 tasks of up to 50 cases
    assert chunked.outcomes() == here.outcomes() and [r.case for r in chunked.results] == TILING
    # failures, Hypothesis' shrinking included, are the same data on the cluster
    mixed = [Case("kernel", "sweep_helpers:BROKEN", shape=(128,)),
             Case("property", "sweep_helpers:seventh_tiling", dtype="float16", examples=40, seed=3),
             *property_cases(functions=["row_tiling"], platforms=["Ascend910B2"], examples=10)]
    here, there = sweep(mixed, progress=False), sweep(mixed, client=client, progress=False)
    assert there.outcomes() == here.outcomes() and [r.status for r in there.results] == ["failed"] * 2 + [
        "passed"] * 2
    assert "shape=(1,)" in there.results[1].error.example


def test_a_faulting_case_on_the_cluster_is_data_and_runs_once(client, runs_file):
    runs_file.unlink(missing_ok=True)
    [result] = sweep([Case("kernel", "sweep_helpers:BROKEN", shape=(128,))], client=client, retries=3,
                     progress=False).results
    assert result.status == "failed" and result.error.error == "npuemu.errors.BoundsError"
    assert result.error.line == sweep_helpers.BAD_LINE and result.error.kernel == "overflowing_copy"
    on_workers = [pid for pid in sweep_helpers.runs(runs_file) if pid != os.getpid()]   # the client built it
    assert len(on_workers) == 1, on_workers                    # retries are for lost workers, not faults


def _stats():
    from npuemu.frontend.build import STATS
    return STATS.lowerings, STATS.store_hits


def test_kernel_cases_run_on_the_cluster_from_the_store_without_lowering(client):
    cases = kernel_cases(["add"], dtypes=["float32", "float16"], shapes=[(4096,), (1000,)])
    before = client.run(_stats)
    report = sweep(cases, client=client, progress=False)
    after = client.run(_stats)
    assert report.ok, report.table()
    assert all(len(r.case.binaries) == 1 and r.binaries_loaded == 1 for r in report.results)
    assert len({r.case.binaries for r in report.results}) == 2            # one binary per dtype
    assert sum(after[w][0] - before[w][0] for w in after) == 0             # no worker lowered a kernel
    assert sum(after[w][1] - before[w][1] for w in after) >= 2             # they loaded them from the store


def test_npuemu_build_on_the_cluster_records_the_binaries_of_one_process(client, tmp_path, monkeypatch, capsys):
    from npuemu.cli import main
    from npuemu.ops.index import forget_indexes

    def built(folder, *where):
        monkeypatch.setenv("NPUEMU_CACHE_DIR", str(folder))
        forget_indexes()
        assert main(["build", "Relu", "--platform", "Ascend910B1", "--no-native", *where]) == 0
        ops = folder / "ops"
        index = json.loads((ops / "Ascend910B1" / "Relu.json").read_text())
        return sorted(k["binarySha256"] for e in index["binList"]
                      for k in json.loads((ops / e["binInfo"]["jsonFilePath"]).read_text())["kernelList"])

    try:
        here = built(tmp_path / "one")
        there = built(tmp_path / "cluster", "--scheduler", client.scheduler.address, "--store",
                      str(tmp_path / "cluster"))
    finally:
        forget_indexes()
    assert here == there and len(here) == 3                    # Relu's float32, float16 and bfloat16 columns
    out = capsys.readouterr().out
    assert f"building 3 column(s) on {client.scheduler.address}" in out
    assert out.count(" on pid ") == 3 and "built 3 binaries of 1 op(s) for Ascend910B1" in out


def _pretend_version(version: str) -> None:
    import npuemu
    npuemu.__version__ = version


def test_a_worker_running_another_npuemu_is_refused(client):
    import npuemu
    real = npuemu.__version__
    worker = sorted(client.scheduler_info()["workers"])[0]
    client.run(_pretend_version, "0.0.0-other", workers=[worker])
    try:
        with pytest.raises(WorkerVersionError, match=rf"worker {worker} is refused: .*npuemu: worker 0\.0\.0-other, "
                                                     rf"client {re.escape(real)}.*Install the same npuemu"):
            sweep(TILING[:4], client=client, progress=False)
    finally:
        client.run(_pretend_version, real, workers=[worker])
    assert sweep(TILING[:4], client=client, progress=False).ok


def test_a_case_whose_worker_dies_is_run_again_on_a_live_worker(client, runs_file):
    """Run last on the module's cluster: it kills a worker (its nanny starts a new one)."""
    died = runs_file.with_name("died.txt")
    case = Case("tiling", "sweep_helpers:dies_once_tiling", shape=(64,), dtype="float16")
    [result] = sweep([case], client=client, retries=0, progress=False).results   # the scheduler's rescheduling
    assert result.status == "passed" and result.detail == "block_dim=1 key=0"
    assert died.exists() and int(died.read_text()) != os.getpid()           # a worker process died first
    assert result.worker.startswith("tcp://")


# ------------------------------------------------------- a scheduler and workers as separate processes


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _processes():
    procs: list[subprocess.Popen] = []
    try:
        yield procs
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)


def _start(procs, args, env, log):
    procs.append(subprocess.Popen([sys.executable, "-m", *args], env=env, stdout=log, stderr=subprocess.STDOUT))


def test_a_scheduler_and_two_worker_processes_run_a_sweep_and_refuse_another_version(tmp_path):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    worker = ["distributed.cli.dask_worker", address, "--nthreads", "1", "--no-dashboard"]
    cases = tiling_cases(functions=["elementwise_tiling", "matmul_tiling"], platforms=["Ascend910B1", "Ascend910B4"])
    with open(tmp_path / "cluster.log", "w") as log, _processes() as procs:
        _start(procs, ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
                       "--no-dashboard"], env, log)
        for _ in range(2):
            _start(procs, worker, env, log)
        with distributed.Client(address, timeout=60) as c:
            c.wait_for_workers(2, timeout=90)
            report = sweep(cases, scheduler=address, progress=False, timeout=30)
            assert report.outcomes() == sweep(cases, progress=False).outcomes() and report.ok
            assert report.workers == 2 and report.mode == address
            # a third worker, started from "another npuemu": refused before any case runs on it
            _start(procs, [*worker, "--preload", str(HERE / "sweep_other_version.py")], env, log)
            c.wait_for_workers(3, timeout=90)
            started = time.perf_counter()
            with pytest.raises(WorkerVersionError, match=r"is refused: .*npuemu: worker 9\.9\.9-other"):
                sweep(cases, scheduler=address, progress=False, timeout=30)
            assert time.perf_counter() - started < 30


# ------------------------------------------------------------------------------------- the command line


def test_npuemu_sweep_prints_the_table_writes_json_and_exits_1_on_a_failure(tmp_path, capsys):
    from npuemu.cli import main
    path = tmp_path / "sweep.json"
    assert main(["sweep", "--platform", "Ascend910B1", "--target", "matmul_tiling", "--json", str(path),
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "8 cases: 8 passed, 0 failed, 0 refused" in out and f"results in {path}" in out
    assert json.loads(path.read_text())["counts"] == {"passed": 8, "failed": 0, "refused": 0}
    assert main(["sweep", "--what", "kernels", "--target", "sweep_helpers:BROKEN", "--shape", "128",
                 "--quiet"]) == 1
    assert "FAILED kernel:sweep_helpers:BROKEN/Ascend910B1/float32/shape(128)" in capsys.readouterr().out
    assert main(["sweep", "--what", "kernels", "--shape", "8xa"]) == 2
    assert "--shape '8xa': a shape is positive dimensions joined by 'x'" in capsys.readouterr().err
