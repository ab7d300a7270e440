"""The reproduction regression check: per-seed numbers against the committed CSV."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from robustbnn.reproduce.check import compare, main


def _csv(values: dict[str, list[float]], unit: str = "percent") -> pd.DataFrame:
    lines = []
    for row, seeds in values.items():
        line = {"row": row, "column": "c", "run": "main", "model": "m", "unit": unit,
                "seeds": sum(v == v for v in seeds)}
        line |= {f"seed{s}": v for s, v in enumerate(seeds)}
        lines.append(line)
    return pd.DataFrame(lines)


def test_tolerance_is_twice_the_committed_seed_range_with_a_floor() -> None:
    committed = _csv({"a": [90.0, 91.0, 90.5], "b": [80.0, 80.0, 80.0]})
    ok = _csv({"a": [91.9, float("nan"), float("nan")], "b": [80.09, float("nan"),
                                                            float("nan")]})
    checked, failures = compare(committed, ok[["row", "column", "run", "model", "seeds",
                                                "seed0"]])
    assert checked == 2 and failures == []
    bad = _csv({"a": [92.1], "b": [80.21]})  # b: beyond the 0.2-point floor
    checked, failures = compare(committed, bad)
    assert len(failures) == 2
    assert failures[0] == ("a / c (m, seed0): committed 90.0000, now 92.1000, "
                           "tolerance 2.0000")


def test_cells_of_runs_not_rerun_are_skipped_and_missing_values_fail() -> None:
    committed = _csv({"a": [90.0], "b": [80.0]})
    new = _csv({"a": [90.0], "b": [float("nan")]})
    new.loc[1, "seeds"] = 0  # b's run was not selected
    assert compare(committed, new) == (1, [])
    new.loc[1, "seeds"] = 1  # b's run ran but lost its number
    assert len(compare(committed, new)[1]) == 1


def test_main_exits_1_beyond_tolerance_and_names_the_cell(tmp_path: Path, capsys) -> None:
    _csv({"a": [90.0, 90.2]}).to_csv(tmp_path / "old.csv", index=False)
    _csv({"a": [95.0, 90.2]}).to_csv(tmp_path / "new.csv", index=False)
    assert main([str(tmp_path / "old.csv"), str(tmp_path / "new.csv")]) == 1
    assert "a / c (m, seed0): committed 90.0000, now 95.0000" in capsys.readouterr().err
    _csv({"a": [90.1, 90.2]}).to_csv(tmp_path / "new.csv", index=False)
    assert main([str(tmp_path / "old.csv"), str(tmp_path / "new.csv")]) == 0
    assert "reproduction check passed: 2 numbers" in capsys.readouterr().out
