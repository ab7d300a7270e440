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


def _group(*cells: tuple[str, list[float]]) -> pd.DataFrame:
    """One row and model ("m"), a cell per (column, seeds)."""
    return pd.concat([_csv({"m": seeds}).assign(column=column) for column, seeds in cells],
                     ignore_index=True)


def test_a_cell_with_a_narrow_seed_range_gets_its_groups_mean_range() -> None:
    # One model's AUROC on three sets: the first's seeds happen to agree (range 0.3), the
    # others' span 3 and 6: a new run may move the first as far as a new seed moves any.
    committed = _group(("c auroc", [88.8, 89.1, 88.9]), ("d auroc", [90.0, 93.0, 91.0]),
                       ("e auroc", [80.0, 86.0, 83.0]), ("c aupr_in", [88.8, 89.1, 88.9]))
    new = committed.copy()
    new.loc[0, "seed0"] = 87.8  # 1.0 away: beyond 2 x 0.3, within 2 x mean(0.3, 3, 6) = 6.2
    assert compare(committed, new) == (12, [])
    new.loc[0, "seed0"] = 82.0  # 6.8 away: beyond it
    assert compare(committed, new)[1] == ["m / c auroc (m, seed0): committed 88.8000, now "
                                          "82.0000, tolerance 6.2000"]
    # Another metric of the same model is its own group: its narrow range stays its own.
    new = committed.copy()
    new.loc[3, "seed0"] = 87.8
    assert compare(committed, new)[1] == ["m / c aupr_in (m, seed0): committed 88.8000, now "
                                          "87.8000, tolerance 0.6000"]
