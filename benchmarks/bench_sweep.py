"""Speed-up of a sweep on a LocalCluster of 2 worker processes over the same sweep in one process.

Two sweeps of the bundled tiling functions over every built-in platform:

* ``property``: a Hypothesis property per function x platform x dtype (96
  cases of 40 drawn shapes, tens of milliseconds each): work Dask can spread;
* ``tiling``: one context per function x platform x dtype x shape class (432
  cases of well under a millisecond each): Dask's per-task cost dominates
  with a task per case, so they go in chunks of 54 (8 tasks).

The value is a ratio, best in-process time / best cluster time over
interleaved rounds (``benchmarks/timing.py``); above 1 the cluster is faster.
The cluster is started and warmed (every worker has imported npuemu and run
a case) before timing; on a machine with 2 cores, 2 is the ceiling.

    python -m benchmarks.bench_sweep
"""
from __future__ import annotations

from typing import Any

from benchmarks.timing import interleaved_best
from npuemu.sweep import property_cases, sweep, tiling_cases

ROUNDS = 3
WORKERS = 2


def _cases(kind: str) -> list[Any]:
    return property_cases(examples=40) if kind == "property" else tiling_cases()


class SweepScaleOut:
    """In-process vs ``LocalCluster(n_workers=2, threads_per_worker=1)``, as a ratio."""

    params = ["property", "tiling"]
    param_names = ["sweep"]
    timeout = 600

    def setup(self, kind: str) -> None:
        import distributed
        self.cluster = distributed.LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                                                dashboard_address=None)
        self.client = distributed.Client(self.cluster)
        self.cases = _cases(kind)
        self.chunk = 1 if kind == "property" else 54
        sweep(self.cases[:2 * WORKERS], client=self.client, progress=False)     # warm: imports, first case
        sweep(self.cases[:2], progress=False)
        self.times: list[float] | None = None

    def teardown(self, kind: str) -> None:
        self.client.close()
        self.cluster.close()

    def _measure(self) -> list[float]:
        if self.times is None:
            here = lambda: sweep(self.cases, progress=False)                          # noqa: E731
            there = lambda: sweep(self.cases, client=self.client, progress=False, chunk=self.chunk)  # noqa: E731
            self.times = interleaved_best(here, there, rounds=ROUNDS)
        return self.times

    def track_speedup_2_workers(self, kind: str) -> float:
        here, there = self._measure()
        return here / there

    track_speedup_2_workers.unit = "x"      # type: ignore[attr-defined]

    def track_in_process_seconds(self, kind: str) -> float:
        return self._measure()[0]

    track_in_process_seconds.unit = "s"     # type: ignore[attr-defined]

    def track_cluster_seconds(self, kind: str) -> float:
        return self._measure()[1]

    track_cluster_seconds.unit = "s"        # type: ignore[attr-defined]

    def track_cases_at_once(self, kind: str) -> float:
        """Seconds of cases summed over the workers / wall time of the cluster sweep: how many cases ran at
        once on average (2 at best).  Near 2 with no speed-up means the cores were busy, not Dask."""
        report = sweep(self.cases, client=self.client, progress=False, chunk=self.chunk)
        return sum(r.seconds for r in report.results) / report.seconds

    track_cases_at_once.unit = "cases"      # type: ignore[attr-defined]


def main() -> None:
    import os
    print(f"{'sweep':<10} {'cases':>6} {'in-process s':>13} {f'{WORKERS} workers s':>12} {'speed-up':>9} "
          f"{'cases at once':>14}  ({os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f})")
    for kind in SweepScaleOut.params:
        bench = SweepScaleOut()
        bench.setup(kind)
        try:
            here, there = bench._measure()
            at_once = bench.track_cases_at_once(kind)
            print(f"{kind:<10} {len(bench.cases):>6} {here:>13.2f} {there:>12.2f} {here / there:>8.2f}x "
                  f"{at_once:>14.2f}", flush=True)
        finally:
            bench.teardown(kind)


if __name__ == "__main__":
    main()
