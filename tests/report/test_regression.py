"""The CI regression check: a hand-edited committed number beyond tolerance fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.report.regression import RegressionError, check
from robustbnn.report.render import render
from robustbnn.report.tolerances import _round_up
from robustbnn.results.store import write_json

from ._runs import rows, write_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def committed(tmp_path: Path) -> Path:
    """A committed reports folder: a run, its leaderboards and tolerances of 0.01."""
    reports = write_run(tmp_path / "reports", rows("a", acc=0.9) + rows("b", acc=0.8))
    render([reports], reports, figures=False)
    board = json.loads((reports / "all_columns.json").read_text())
    keys = [c["key"] for c in board["columns"] if c["kind"] == "number" and not c["timing"]]
    write_json(reports / "tolerances.json", {"columns": {k: 0.01 for k in keys}})
    return reports


def _edit(reports: Path, model: str, key: str, value: float) -> None:
    path = reports / "all_columns.json"
    board = json.loads(path.read_text())
    next(r for r in board["rows"] if r["model"] == model)[key] = value
    path.write_text(json.dumps(board, indent=2))


def _regenerate(tmp_path: Path) -> Path:
    new = write_run(tmp_path / "new", rows("a", acc=0.9) + rows("b", acc=0.8))
    render([new], new, figures=False)
    return new


def test_identical_numbers_pass(committed: Path, tmp_path: Path) -> None:
    assert check(committed, _regenerate(tmp_path)) > 0


def _numbers(reports: Path, *, timing: bool) -> set[str]:
    board = json.loads((reports / "all_columns.json").read_text())
    return {c["key"] for c in board["columns"] if c["kind"] == "number" and c["timing"] == timing}


def test_an_edit_within_tolerance_passes(committed: Path, tmp_path: Path) -> None:
    checked = _numbers(committed, timing=False)
    assert "clean_accuracy" in checked  # else the edit below would test nothing
    _edit(committed, "a", "clean_accuracy", 0.905)
    new = _regenerate(tmp_path)
    assert check(committed, new) == 2 * len(checked)  # both models, every checked column
    # the edit is seen: under a tolerance below it the same pair fails, naming it
    write_json(tmp_path / "tight.json", {"columns": {k: 0.001 for k in checked}})
    with pytest.raises(RegressionError, match=r"^regression check failed: 1 difference\(s\).*"
                       r"a clean_accuracy: committed 0\.905, new 0\.9, "):
        check(committed, new, tolerances=tmp_path / "tight.json")


def test_an_edit_beyond_tolerance_fails_naming_everything(committed: Path,
                                                         tmp_path: Path) -> None:
    _edit(committed, "b", "clean_accuracy", 0.85)
    with pytest.raises(RegressionError) as err:
        check(committed, _regenerate(tmp_path))
    message = str(err.value)
    assert "b clean_accuracy: committed 0.85, new 0.8, |Δ| 0.05 > tolerance 0.01" in message
    assert "refresh" in message and "reports/README.md" in message


def test_timing_columns_are_not_checked(committed: Path, tmp_path: Path) -> None:
    assert "seconds_per_1000_predictions" in _numbers(committed, timing=True)
    _edit(committed, "a", "seconds_per_1000_predictions", 1000.0)
    assert check(committed, _regenerate(tmp_path)) == 2 * len(_numbers(committed, timing=False))


def test_a_new_or_missing_model_fails(committed: Path, tmp_path: Path) -> None:
    new = write_run(tmp_path / "new", rows("a", acc=0.9))
    render([new], new, figures=False)
    with pytest.raises(RegressionError, match="model b is only in the committed leaderboard"):
        check(committed, new)


def test_cli_check_exits_1_with_one_line(committed: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    new = write_run(tmp_path / "new", rows("a", acc=0.9) + rows("b", acc=0.8))
    assert main(["report", str(new), "--check", str(committed), "--no-figures"]) == 0
    assert "regression check passed" in capsys.readouterr().out
    _edit(committed, "a", "fgsm_accuracy_eps0.1_S32", 0.9)
    assert main(["report", str(new), "--check", str(committed), "--no-figures"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a fgsm_accuracy_eps0.1_S32: committed 0.9, new 0.5" in err[0]


def test_the_check_compares_every_column_not_just_the_headline(committed: Path,
                                                              tmp_path: Path) -> None:
    headline = {c["key"] for c in json.loads((committed / "leaderboard.json").read_text())[
        "columns"]}
    assert "fgsm_accuracy_eps0.1_S32" not in headline  # only in all_columns.json
    _edit(committed, "a", "fgsm_accuracy_eps0.1_S32", 0.9)
    with pytest.raises(RegressionError, match=r"new/all_columns\.json and the committed "
                       r".*reports/all_columns\.json: a fgsm_accuracy_eps0\.1_S32: "
                       r"committed 0\.9, new 0\.5,"):
        check(committed, _regenerate(tmp_path))


def test_a_committed_folder_of_the_older_format_is_checked_too(committed: Path,
                                                               tmp_path: Path) -> None:
    # Rendered before the headline: leaderboard.json held every column, no all_columns.json.
    (committed / "all_columns.json").replace(committed / "leaderboard.json")
    assert check(committed, _regenerate(tmp_path)) == 2 * len(_numbers_of(
        committed / "leaderboard.json"))
    _edit_file(committed / "leaderboard.json", "b", "clean_accuracy", 0.85)
    with pytest.raises(RegressionError, match=r"the committed .*reports/leaderboard\.json: "
                       r"b clean_accuracy: committed 0\.85, new 0\.8,"):
        check(committed, _regenerate(tmp_path))


def _numbers_of(path: Path) -> set[str]:
    board = json.loads(path.read_text())
    return {c["key"] for c in board["columns"] if c["kind"] == "number" and not c["timing"]}


def _edit_file(path: Path, model: str, key: str, value: float) -> None:
    board = json.loads(path.read_text())
    next(r for r in board["rows"] if r["model"] == model)[key] = value
    path.write_text(json.dumps(board, indent=2))


def test_committed_reports_are_the_rendering_of_the_committed_results(tmp_path: Path) -> None:
    reports = ROOT / "reports"
    assert main(["report", "--quiet", str(reports), "--out", str(tmp_path), "--no-figures"]) == 0
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "all_columns.csv",
                 "all_columns.json", "ood.md", "attack.md",
                 *(p.name for p in tmp_path.glob("table_*"))):
        assert (tmp_path / name).read_bytes() == (reports / name).read_bytes(), name
    tolerances = json.loads((reports / "tolerances.json").read_text())
    board = json.loads((reports / "all_columns.json").read_text())
    # P(beats best) is derived from the other columns by the report: never compared
    checked = {c["key"] for c in board["columns"] if c["kind"] == "number" and not c["timing"]
               and c["metric"] != "p_better"}
    assert checked == set(tolerances["columns"]) and tolerances["seeds"] == [0, 1, 2]
    assert json.loads((reports / "run.json").read_text())["suite"] == "ci"


@pytest.mark.parametrize(("value", "expected"), [(0.0126, "0.013"), (0.12, "0.12"),
                                                  (0.0781, "0.079"), (3.01, "3.1"), (0.0, "0.0")])
def test_tolerances_round_up_to_two_significant_digits_without_float_noise(value, expected):
    assert repr(_round_up(value)) == expected
