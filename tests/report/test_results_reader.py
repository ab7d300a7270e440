"""The results reader refuses rows that would lie, and NaN never reads as "not measured".

Issue 28, defects 4 and 10: duplicate rows with conflicting values were averaged, an accuracy
of 5.0 or inf was ranked, NaN printed as "–" like a missing cell, ``leaderboard.json`` held
``Infinity``, and a lone surrogate in a name ended in a UnicodeEncodeError.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.cli import main
from robustbnn.report.html import to_html
from robustbnn.report.leaderboard import (
    NAN_NOTE,
    Leaderboard,
    leaderboard,
    to_csv,
    to_json,
    to_markdown,
)
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import (
    RESULTS,
    RunFolderError,
    read_results,
    results_frame,
    write_results,
)

from ._runs import rows, write_run

ROW = Result("mlp", 0, "clean", "mnist5k", setting(S_eval=20), "", "accuracy", 0.615)


def _folder(tmp_path: Path, *lines: dict | str) -> Path:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / RESULTS).write_text("".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return folder


def _hint(folder: Path) -> str:
    return f"rerun robustbnn bench (`robustbnn bench --out {folder}`) to recreate it"


def test_a_duplicate_with_another_value_is_refused_naming_both_lines(tmp_path: Path) -> None:
    # Before: the two rows were averaged, 0.615 and 0.99 -> 0.8025 on the leaderboard.
    folder = _folder(tmp_path, ROW.to_json(), {**ROW.to_json(), "value": 0.99})
    with pytest.raises(RunFolderError) as info:
        read_results(folder)
    assert str(info.value) == (
        f"{folder / RESULTS} line 2: model 'mlp', seed 0, task 'clean', dataset 'mnist5k', "
        "setting S_eval=20: accuracy 0.99 conflicts with 0.615 on line 1 for the same result "
        f"(a run holds one value per result); remove the wrong line, or {_hint(folder)}")


def test_a_repeated_row_with_the_same_value_counts_once(tmp_path: Path) -> None:
    other = {**ROW.to_json(), "setting": {"S_eval": 21}}  # another setting: another result
    frame = read_results(_folder(tmp_path, ROW.to_json(), other, ROW.to_json()))
    assert list(frame["value"]) == [0.615, 0.615] and len(frame) == 2


@pytest.mark.parametrize(("metric", "value", "problem"), [
    ("accuracy", 5.0, "accuracy 5 is outside [0, 1]"),
    ("accuracy", "Infinity", "accuracy inf is not a finite number"),
    ("accuracy", "NaN", "accuracy nan is not a finite number"),
    ("auroc", -0.5, "auroc -0.5 is outside [0, 1]"),
    ("ece", 1.5, "ece 1.5 is outside [0, 1]"),
    ("brier", 2.5, "brier 2.5 is outside [0, 2]"),
    ("nll", -1.0, "nll -1 is outside [0, inf]"),
    ("nll", "Infinity", "nll inf is not a finite number"),
])
def test_a_value_outside_its_metric_is_refused_in_one_line(
        tmp_path: Path, metric: str, value: float | str, problem: str) -> None:
    line = json.dumps({**ROW.to_json(), "metric": metric, "value": 0.5})
    line = line.replace("0.5}", f"{value}}}")  # json.dumps has no Infinity/NaN of its own
    folder = _folder(tmp_path, {**ROW.to_json(), "metric": "nll", "value": 0.3}, line)
    with pytest.raises(RunFolderError) as info:
        read_results(folder)
    assert str(info.value) == (
        f"{folder / RESULTS} line 2: model 'mlp', seed 0, task 'clean', dataset 'mnist5k', "
        f"setting S_eval=20: {problem}; fix or remove the line, or {_hint(folder)}")


def test_nan_where_a_metric_may_be_nan_and_any_float_for_other_metrics(tmp_path: Path) -> None:
    flip = {**ROW.to_json(), "task": "worst_of_k", "metric": "flip_probability", "value": 0.5}
    energy = {**ROW.to_json(), "measure": "energy", "metric": "mean_uncertainty", "value": 0.5}
    lines = [json.dumps(d).replace("0.5}", v + "}")
             for d, v in ((flip, "NaN"), (energy, "-1e30"), ({**energy, "measure": "x"}, "NaN"))]
    frame = read_results(_folder(tmp_path, *lines))
    assert math.isnan(frame["value"][0]) and frame["value"][1] == -1e30


def test_the_report_cli_stops_on_a_refused_row_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_run(tmp_path / "run", rows("m"))
    with (folder / RESULTS).open("a") as f:
        f.write(json.dumps({**ROW.to_json(), "model": "m", "dataset": "toy",
                            "setting": {"S_eval": 4}, "value": 0.99}) + "\n")
    assert main(["report", str(folder), "--no-figures"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"robustbnn: error: {folder / RESULTS} line ")
    assert "accuracy 0.99 conflicts with 0.9 on line 1 for the same result" in err[0]
    assert not (folder / "leaderboard.md").exists()


def test_a_lone_surrogate_in_a_name_is_one_line_not_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Before: UnicodeEncodeError (--no-figures) or a TypeError from matplotlib.
    folder = write_run(tmp_path / "run", rows("m"))
    text = (folder / RESULTS).read_text().replace('"model": "m"', '"model": "m\\ud800"', 1)
    (folder / RESULTS).write_text(text)
    for figures in ([], ["--no-figures"]):
        assert main(["report", str(folder), *figures]) == 1
        assert capsys.readouterr().err.strip().splitlines() == [
            f"robustbnn: error: {folder / RESULTS} line 1 is corrupt (field 'model' holds a lone "
            f"surrogate (U+D800), which no UTF-8 file can hold); {_hint(folder)}"]
    with pytest.raises(RunFolderError, match=r"^cannot write the results to .*: a result of "
                       r"model 'm\\ud800': field 'model' holds a lone surrogate \(U\+D800\)"):
        write_results(tmp_path / "new", rows("m\ud800"))
    assert not (tmp_path / "new" / RESULTS).exists()


def test_results_that_are_not_utf8_name_the_file_and_line(tmp_path: Path) -> None:
    folder = _folder(tmp_path, ROW.to_json())
    with (folder / RESULTS).open("ab") as f:
        f.write(b'{"model": "\xff"}\n')
    with pytest.raises(RunFolderError) as info:
        read_results(folder)
    assert str(info.value) == (f"{folder / RESULTS} line 2 is not UTF-8 text (byte 0xff: "
                               f"invalid start byte); {_hint(folder)}")


def _board_with_nan() -> Leaderboard:
    """Model ``a`` measured NaN clean accuracy in one of two runs; ``b`` has no NLL."""
    a0, a1 = rows("a", seed=0), rows("a", seed=1)
    a1 = [r if r.metric != "accuracy" or r.task != "clean" else
          Result(r.model, r.seed, r.task, r.dataset, r.setting, r.measure, r.metric, math.nan)
          for r in a1]
    b = [r for s in (0, 1) for r in rows("b", seed=s) if r.metric != "nll"]
    frame = pd.concat([results_frame(a0 + [r for r in b if r.seed == 0]).assign(run=0),
                       results_frame(a1 + [r for r in b if r.seed == 1]).assign(run=1)],
                      ignore_index=True)
    return leaderboard(frame)


def test_nan_and_not_measured_differ_in_every_format() -> None:
    # Before: the NaN run was skipped by the mean (a's accuracy read 0.9000), and a NaN cell
    # printed "–" like a missing one; leaderboard.json could hold NaN or Infinity.
    board = _board_with_nan()
    assert ("a", "clean_accuracy") in board.nan and ("b", "clean_nll") not in board.nan
    md = to_markdown(board, ["legend"], title="t").splitlines()
    a = next(line for line in md if line.startswith("| a |")).split(" | ")
    b = next(line for line in md if line.startswith("| b |")).split(" | ")
    assert a[1:3] == ["NaN", "0.3000 ± 0.0000"] and b[2] == "–"
    assert md[-1] == f"* {NAN_NOTE}" and "– = not measured" in NAN_NOTE  # said in the legend
    csv = to_csv(board).splitlines()
    header = csv[0].split(",")
    values = {line.split(",")[0]: dict(zip(header, line.split(","), strict=True))
              for line in csv[1:]}
    assert values["a"]["clean_accuracy"] == "NaN" and values["a"]["clean_accuracy_std"] == "NaN"
    assert values["b"]["clean_nll"] == "" and values["b"]["clean_accuracy"] == "0.9"
    text = to_json(board, ["legend"], title="t")
    payload = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    row_a, row_b = sorted(payload["rows"], key=lambda r: r["model"])
    assert row_a["clean_accuracy"] is None
    assert row_a["nonfinite"] == {"clean_accuracy": "NaN", "clean_accuracy_std": "NaN",
                                  "clean_accuracy_lo": "NaN", "clean_accuracy_hi": "NaN"}
    assert row_b["clean_nll"] is None and "nonfinite" not in row_b
    page = to_html(board, ["legend"], title="t", figures=[], details=[])
    assert '<td class="num" data-value="">NaN</td>' in page
    assert '<td class="num" data-value="">–</td>' in page


def test_leaderboard_json_is_strict_for_infinite_values() -> None:
    results = results_frame([
        r if r.metric != "seconds_per_1000_predictions" else
        Result(r.model, r.seed, r.task, r.dataset, r.setting, r.measure, r.metric, math.inf)
        for r in rows("a")])
    board = leaderboard(results)
    payload = json.loads(to_json(board, [], title="t"),
                         parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert payload["rows"][0]["nonfinite"] == {"seconds_per_1000_predictions": "Infinity"}
    assert "| a | 0.9000 |" in to_markdown(board, [], title="t")
    assert "Infinity" in to_csv(board)
