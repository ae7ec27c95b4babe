"""Run a list of cases in this process, or on a Dask cluster, and collect their results.

In-process (the default) the cases run one after the other, exactly as
``npuemu.testing`` would run them.  Given a scheduler address, a
``dask.distributed.Client`` or a number of local workers (a ``LocalCluster``
of one single-threaded process per worker), every case becomes one Dask task
with its own key (``pure=False``: a case is run each time a sweep asks):

- first every worker's fingerprint (npuemu version and sources, Numba,
  llvmlite, NumPy, Python) is compared with the client's, and a worker that
  differs is refused (:mod:`.versions`); every task checks again;
- kernel cases have their binaries built once here, on the client
  (:mod:`.prebuild`); workers that share the binary store load them by
  sha256, verified, and lower nothing;
- a case never raises on a worker (:func:`.execute.run_case`), so Dask's
  ``retries`` only ever re-run work lost with a worker, never a case that
  faulted;
- results come back in the order of the cases, whatever order they finish in.
"""
from __future__ import annotations

import os
import time
import uuid
from typing import Any, Callable, Iterable, Mapping

from ..errors import SweepError, WorkerVersionError
from .cases import Case
from .execute import FAILED, CaseResult, ErrorInfo, run_case
from .report import Progress, SweepReport
from .versions import check_workers, fingerprint, verify

INSTALL = "pip install 'npuemu[scaleout]'"


def require_distributed() -> Any:
    """The ``distributed`` module, or a :class:`SweepError` saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise SweepError(f"running a sweep on a Dask scheduler needs dask.distributed, which is not installed: "
                         f"{INSTALL} (without a scheduler the sweep runs in this process)") from None
    return distributed


def run_remote(cases: Case | tuple[Case, ...], expected: Mapping[str, str], store: str | None
               ) -> CaseResult | list[CaseResult]:
    """The task a worker runs for one case (or a chunk of them): refuse other code, use the shared store,
    run the case(s)."""
    try:
        from distributed import get_worker
        address = get_worker().address
    except (ImportError, ValueError):
        address = ""
    verify(expected, address or "this worker")
    if store and os.environ.get("NPUEMU_CACHE_DIR") != store:
        os.environ["NPUEMU_CACHE_DIR"] = store
    if isinstance(cases, Case):
        return run_case(cases, address)
    return [run_case(c, address) for c in cases]


def sweep(cases: Iterable[Case], *, scheduler: str | None = None, client: Any = None,
          local_workers: int | None = None, store: str | os.PathLike[str] | None = None, retries: int = 2,
          prebuild: bool = True, progress: bool | Progress = True, timeout: float = 30.0,
          chunk: int = 1) -> SweepReport:
    """Run ``cases`` and return their results (in case order) as a :class:`SweepReport`.

    With none of ``scheduler`` (``"tcp://host:8786"``), ``client`` (a
    ``dask.distributed.Client``) or ``local_workers`` (a ``LocalCluster`` of
    that many worker processes, started and stopped here) the cases run in
    this process and Dask is not needed.  ``store`` is the kernel cache
    directory (``NPUEMU_CACHE_DIR``) the workers share with the client: a path
    every worker sees (on one host, the client's own cache, the default for
    ``local_workers``).  ``retries`` re-runs a task whose worker was lost.
    ``prebuild`` builds kernel cases' binaries here first.  ``timeout`` bounds
    the connection to the scheduler, in seconds.  ``chunk`` cases go into one
    task (default 1, a task per case): Dask spends about a millisecond per
    task, more than a tiling case takes, so chunks of tens of such cases pay off.
    """
    cases = list(cases)
    if sum(x is not None for x in (scheduler, client, local_workers)) > 1:
        raise SweepError("give one of scheduler=, client= and local_workers=")
    if local_workers is not None and local_workers < 1:
        raise SweepError(f"local_workers must be at least 1, got {local_workers}")
    if chunk < 1:
        raise SweepError(f"chunk must be at least 1 case per task, got {chunk}")
    bar = progress if isinstance(progress, Progress) else Progress(len(cases)) if progress else None
    start = time.perf_counter()
    if scheduler is None and client is None and local_workers is None:
        results = []
        for case in cases:
            results.append(run_case(case))
            if bar is not None:
                bar.update(results[-1])
        return SweepReport(results, time.perf_counter() - start)
    distributed = require_distributed()
    with connect(distributed, scheduler, client, local_workers, timeout) as (c, mode):
        if store is None and local_workers is not None:
            from ..binary.store import store_dir
            store = store_dir().parent                 # the client's kernel cache: one host, one store
        workers = check_workers(c)
        store = str(store) if store else None
        if prebuild:
            cases = _prebuilt(cases, store, bar.out if bar is not None else None)
        results = _run_on(c, distributed, cases, store, retries, bar, chunk)
        info = {"fingerprint": fingerprint(), "store": store}
        return SweepReport(results, time.perf_counter() - start, mode, workers, info)


def _prebuilt(cases: list[Case], store: str | None, out: Any = None) -> list[Case]:
    """Kernel cases with their binaries built here, into ``store`` (the cache the workers share) when given;
    a line to ``out`` for each case whose build took a while."""
    kernels = sum(c.kind == "kernel" for c in cases)
    if not kernels:
        return cases
    from .prebuild import build_case
    old = os.environ.get("NPUEMU_CACHE_DIR")
    if store:
        os.environ["NPUEMU_CACHE_DIR"] = store
    try:
        done, built = 0, []
        for c in cases:
            began = time.perf_counter()
            built.append(build_case(c))
            done += c.kind == "kernel"
            took = time.perf_counter() - began
            if out is not None and took > 0.5:
                out.write(f"[binaries {done}/{kernels}] {c.id}: {len(built[-1].binaries)} built in {took:.1f} s\n")
                out.flush()
        return built
    finally:
        if store:
            os.environ.pop("NPUEMU_CACHE_DIR") if old is None else os.environ.__setitem__("NPUEMU_CACHE_DIR", old)


class connect:
    """The client to run on: the one given, one connected to ``scheduler``, or a new LocalCluster's."""

    def __init__(self, distributed: Any, scheduler: str | None, client: Any, local_workers: int | None,
                 timeout: float):
        self.args = (distributed, scheduler, client, local_workers, timeout)
        self.owned: list[Any] = []

    def __enter__(self) -> tuple[Any, str]:
        distributed, scheduler, client, local_workers, timeout = self.args
        if client is not None:
            return client, str(client.scheduler.address)
        if local_workers is not None:
            cluster = distributed.LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True,
                                               dashboard_address=None)
            self.owned.append(cluster)
            client = distributed.Client(cluster)
            self.owned.insert(0, client)
            return client, f"LocalCluster({local_workers})"
        try:
            client = distributed.Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise SweepError(f"cannot reach the Dask scheduler {scheduler} within {timeout:g} s ({exc}); start "
                             f"one with `dask scheduler` and its workers with `dask worker {scheduler}`") from None
        self.owned.append(client)
        return client, str(scheduler)

    def __exit__(self, *exc: Any) -> None:
        for thing in self.owned:
            thing.close()


def _run_on(client: Any, distributed: Any, cases: list[Case], store: str | None, retries: int,
            bar: Progress | None, chunk: int = 1) -> list[CaseResult]:
    expected = fingerprint()
    run_id = uuid.uuid4().hex[:8]
    futures = {}
    for i in range(0, len(cases), chunk):
        part = cases[i] if chunk == 1 else tuple(cases[i:i + chunk])
        name = f"npuemu-case-{cases[i].token}-{run_id}-{i}" + (f"+{len(part) - 1}" if chunk > 1 else "")
        futures[client.submit(run_remote, part, expected, store, key=name, pure=False, retries=retries)] = i
    results: list[CaseResult | None] = [None] * len(cases)
    try:
        for fut in distributed.as_completed(list(futures)):
            i = futures[fut]
            done = _result_of(fut, cases[i:i + chunk])
            results[i:i + len(done)] = done
            for r in done if bar is not None else ():
                bar.update(r)
    finally:
        client.cancel([f for f in futures if not f.done()])
    return [r for r in results if r is not None]


def _result_of(fut: Any, cases: list[Case]) -> list[CaseResult]:
    """A finished task's results; a task that raised (its worker killed again and again) fails its cases,
    a refused worker stops the sweep."""
    try:
        out = fut.result()
    except WorkerVersionError:
        raise
    except Exception as exc:          # noqa: BLE001 - infrastructure that gave up: reported with the cases
        return [CaseResult(c, FAILED, ErrorInfo.of(exc), "the task did not finish on any worker") for c in cases]
    return [out] if isinstance(out, CaseResult) else list(out)


def run_map(client: Any, fn: Callable[..., Any], items: list[Any], retries: int = 2,
            progress: Callable[[Any], None] | None = None) -> list[Any]:
    """``[fn(item) for item in items]`` on ``client``'s workers (checked first), in item order."""
    distributed = require_distributed()
    check_workers(client)
    run_id = uuid.uuid4().hex[:8]
    name = getattr(fn, "__name__", "task")
    futures = {client.submit(fn, item, key=f"npuemu-{name}-{run_id}-{i}", pure=False, retries=retries): i
               for i, item in enumerate(items)}
    out: list[Any] = [None] * len(items)
    for fut in distributed.as_completed(list(futures)):
        out[futures[fut]] = fut.result()
        if progress is not None:
            progress(out[futures[fut]])
    return out
