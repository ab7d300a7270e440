"""The ratio bookkeeping every benchmark in benchmarks/ relies on (no timing asserted)."""

from __future__ import annotations

import math
import types

import pytest

from benchmarks import _ratios


class FakeBenchmark:
    """pytest-benchmark's fixture, reduced to what ``measure`` uses, with a fixed median."""

    def __init__(self, median: float | None) -> None:
        self.median, self.extra_info, self.group, self.calls = median, {}, None, 0
        self.stats = None if median is None else types.SimpleNamespace(
            stats=types.SimpleNamespace(median=median))

    def pedantic(self, fn, args=(), **kwargs) -> None:  # noqa: ANN001
        self.calls += 1
        fn(*args)


@pytest.fixture(autouse=True)
def fresh_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_ratios, "_BASELINES", {})
    monkeypatch.setattr(_ratios, "_ROWS", [])


def test_speedup_is_baseline_over_ours_per_baseline_of_the_group() -> None:
    _ratios.measure(FakeBenchmark(0.6), "g", "loop", lambda: None, baseline=True)
    _ratios.measure(FakeBenchmark(0.9), "g", "other_tool", lambda: None, baseline=True)
    _ratios.measure(FakeBenchmark(1.0), "h", "unrelated", lambda: None, baseline=True)
    ours = FakeBenchmark(0.3)
    _ratios.measure(ours, "g", "robustbnn", lambda: None)
    assert ours.extra_info == {"speedup_vs_loop": 2.0, "speedup_vs_other_tool": 3.0}
    assert ours.group == "g"
    lines = _ratios.summary_lines()
    assert lines[1].startswith("| group | ours | baseline")
    assert lines[3:] == ["| g | robustbnn | loop | 0.6 | 0.3 | 2.00 |",
                         "| g | robustbnn | other_tool | 0.9 | 0.3 | 3.00 |"]


def test_no_baseline_no_ratio_and_disabled_benchmarks_run_once() -> None:
    ours = FakeBenchmark(0.3)
    _ratios.measure(ours, "lonely", "robustbnn", lambda: None)
    assert ours.extra_info == {} and _ratios.summary_lines() == []
    disabled = FakeBenchmark(None)
    assert math.isnan(_ratios.measure(disabled, "g", "x", lambda: None))
    assert disabled.calls == 1
