"""The plain benchmark runner (benchmarks/run.py) and the shared timing helpers (benchmarks/timing.py)."""
from __future__ import annotations

import re

from benchmarks import timing
from benchmarks.run import main, run_class


class _Recorded:
    """A parameterised benchmark in asv's shape that records what the runner calls."""

    params = [["a", "b"], [1, 2]]
    param_names = ["name", "size"]
    calls: list[tuple] = []

    def setup(self, name: str, size: int) -> None:
        self.calls.append(("setup", name, size))

    def teardown(self, name: str, size: int) -> None:
        self.calls.append(("teardown", name, size))

    def track_size(self, name: str, size: int) -> float:
        return size * 1.5

    def time_nothing(self, name: str, size: int) -> None:
        pass


def test_every_case_is_set_up_run_and_torn_down_with_its_parameters():
    _Recorded.calls = []
    rows: list[str] = []
    assert run_class(_Recorded, ["[b,"], rows.append) == 4          # two cases x (track_ + time_)
    assert _Recorded.calls == [("setup", "b", 1), ("teardown", "b", 1),
                                            ("setup", "b", 2), ("teardown", "b", 2)]
    values = {r.split()[0]: float(r.split()[1]) for r in rows}
    assert values["_Recorded[b,1].track_size"] == 1.5 and values["_Recorded[b,2].track_size"] == 3.0
    assert "_Recorded[b,2].time_nothing" in values


def test_teardown_runs_when_a_benchmark_raises():
    class Failing(_Recorded):
        params = [["x"], [7]]

        def track_size(self, name: str, size: int) -> float:
            raise RuntimeError("boom")

    Failing.calls = []
    try:
        run_class(Failing, [], lambda row: None)
    except RuntimeError:
        pass
    assert Failing.calls == [("setup", "x", 7), ("teardown", "x", 7)]


def test_a_filtered_run_of_a_real_benchmark_prints_its_values(capsys):
    assert main(["Selection"]) == 0
    rows = capsys.readouterr().out.splitlines()
    values = [r for r in rows if r.startswith("Selection.")]
    assert len(values) >= 4 and not any(r.startswith(("Add", "Prepare")) for r in rows)
    for row in values:
        assert re.match(r"Selection\.\w+\s+\d+\.\d{3}\s", row), row
        assert float(row.split()[1]) > 0


def test_interleaved_ratio_alternates_the_two_functions_round_by_round(monkeypatch):
    order: list[str] = []
    clock = iter(range(1000))
    monkeypatch.setattr(timing.time, "perf_counter", lambda: float(next(clock)))
    # every call takes one tick of the fake clock, so each best is 1 and the ratio 1
    assert timing.interleaved_ratio(lambda: order.append("a"), lambda: order.append("b"), rounds=3) == 1.0
    assert order == ["a", "b"] * 3


def test_interleaved_ratio_compares_the_best_rounds(monkeypatch):
    # a takes 6, 4, 5 ticks and b 2, 3, 2: best 4 over best 2
    ticks = iter([0, 6, 6, 8, 8, 12, 12, 15, 15, 20, 20, 22])
    monkeypatch.setattr(timing.time, "perf_counter", lambda: float(next(ticks)))
    assert timing.interleaved_ratio(lambda: None, lambda: None, rounds=3) == 2.0
