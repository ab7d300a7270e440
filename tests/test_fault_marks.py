"""A fault is never a number (issue 49): a mean made of a faulted cell reads ``partial``.

A model whose logits are NaN on some OOD sets got a perfect mean OOD AUROC: the mean of the
one set left. Here such a model's number is left out of the column in every report
(Markdown, CSV, JSON, HTML), the legend names the faulted sets, and ``bench`` exits 1.
The plug-in is ``tests/plugins/bright_nan_plugin.py``: NaN logits for a mean pixel above 0.4
(uniform noise and the glyphs; not clipped Gaussian noise, not the digits).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.cli import main
from robustbnn.report.leaderboard import format_cell, leaderboard, to_csv, to_json, to_markdown
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import results_frame
from tests.plugins.fresh import forgotten_after_each_test

from .report._runs import MEASURES, rows

PLUGIN = "tests.plugins.bright_nan_plugin"

_forgotten = forgotten_after_each_test(PLUGIN)
PARTIAL = "partial"  # robustbnn.report.faults.PARTIAL, spelled out: every report shows it
NOTE = ("**partial** = not a number: the model returned NaN or inf logits (a numerical fault) in "
        "a cell this number is made of, so it is left out, in every run, rather than shown as "
        "the mean of the other cells: `{model}`: mean OOD AUROC ({cells}).")


def _fault(model: str, dataset: str, seed: int = 0, **knobs: object) -> Result:
    """The flag row a faulted OOD cell stores (robustbnn.run.tasks._faults)."""
    knobs = {"in_task": "ood", "S_eval": 4, **knobs}
    return Result(model, seed, "numerical_fault", dataset, setting(**knobs), "",
                  "nonfinite_logits", 40.0)


def _faulted(model: str, sets: tuple[str, ...], seed: int = 0) -> list[Result]:
    """``rows(model)`` with the OOD rows of ``sets`` replaced by their fault flags."""
    kept = [r for r in rows(model, seed=seed) if not (r.task == "ood" and r.dataset in sets)]
    return kept + [_fault(model, s, seed) for s in sets]


def test_a_mean_over_sets_with_a_faulted_set_is_not_a_number() -> None:
    results = results_frame(rows("a", ood=0.7) + _faulted("b", ("uniform",)))
    board = leaderboard(results)
    col = board.column("ood_auroc_mean")
    assert math.isnan(board.table.at["b", "ood_auroc_mean"])
    assert format_cell(board, "b", col) == PARTIAL
    assert board.table.at["a", "ood_auroc_mean"] == pytest.approx(0.7)  # untouched
    assert board.faults == {("b", "ood_auroc_mean"): "ood on uniform"}
    assert board.table.at["b", "ood_auroc_mean_measure"] == ""  # no measure named for it
    assert "| b |" in (md := to_markdown(board, [], title="t"))
    assert NOTE.format(model="b", cells="ood on uniform") in md
    csv = pd.read_csv(pd.io.common.StringIO(to_csv(board)), keep_default_na=False)
    assert csv.set_index("model").at["b", "ood_auroc_mean"] == PARTIAL
    row = next(r for r in json.loads(to_json(board, [], title="t"))["rows"] if r["model"] == "b")
    assert row["ood_auroc_mean"] is None
    assert row[PARTIAL] == {"ood_auroc_mean": "numerical fault: ood on uniform"}
    assert board.table.at["b", "clean_accuracy"] == pytest.approx(0.9)  # other columns kept


def test_a_fault_in_one_run_of_two_leaves_the_model_out_of_both() -> None:
    results = results_frame(rows("a") + rows("b") + rows("a", seed=1)
                            + _faulted("b", ("gaussian",), seed=1))
    results["run"] = results["seed"]
    board = leaderboard(results)
    assert board.faults == {("b", "ood_auroc_mean"): "ood on gaussian in 1/2 runs"}
    assert format_cell(board, "b", board.column("ood_auroc_mean")) == PARTIAL
    assert not math.isnan(board.table.at["a", "ood_auroc_mean"])


def test_a_fault_falls_only_on_the_columns_of_its_settings() -> None:
    """A fault of the FGSM cell at S_attack = 1 is not one of the columns at S = 32."""
    fgsm = [r for r in rows("b") if not (r.task == "fgsm" and r.setting["S_attack"] == 1)]
    flag = Result("b", 0, "numerical_fault", "toy",
                  setting(in_task="fgsm", S_attack=1, S_eval=4), "", "nonfinite_logits", 3.0)
    board = leaderboard(results_frame(rows("a") + fgsm + [flag]))
    assert set(board.faults) == {("b", "fgsm_accuracy_eps0.1_S1"),
                                 ("b", "fgsm_accuracy_eps0.3_S1")}
    assert format_cell(board, "b", board.column("fgsm_accuracy_eps0.1_S32")) != PARTIAL
    assert not math.isnan(board.table.at["b", "fgsm_accuracy_eps0.1_S32"])
    assert board.table.at["b", "numerical_faults"] == "fgsm S=1"


def _adv_ood(model: str, sets: tuple[str, ...]) -> list[Result]:
    """Adversarial-OOD AUROC rows (clean images and eps = 0.1) of two measures per set."""
    return [Result(model, 0, "adv_ood", ood, setting(eps=eps, S_attack=2, S_eval=4), measure,
                   "auroc", 0.9 - eps - 0.05 * i)
            for ood in sets for eps in (0.0, 0.1) for i, measure in enumerate(MEASURES)]


def test_a_worst_case_ood_auroc_with_a_faulted_set_is_not_a_number() -> None:
    flag = _fault("b", "glyphs", in_task="adv_ood", S_attack=2)
    results = results_frame(rows("a") + rows("b") + _adv_ood("a", ("uniform", "glyphs"))
                            + _adv_ood("b", ("uniform",)) + [flag])
    board = leaderboard(results)
    assert board.faults == {("b", "adv_ood_auroc_eps0.1"): "adv_ood on glyphs",
                            ("b", "adv_ood_auroc_clean"): "adv_ood on glyphs"}
    assert format_cell(board, "b", board.column("adv_ood_auroc_eps0.1")) == PARTIAL
    assert board.table.at["a", "adv_ood_auroc_eps0.1"] == pytest.approx(0.8)
    assert not math.isnan(board.table.at["b", "ood_auroc_mean"])  # the plain OOD cells ran


def test_a_run_without_faults_has_no_mark() -> None:
    board = leaderboard(results_frame(rows("a") + rows("b")))
    assert not board.faults
    assert PARTIAL not in to_markdown(board, [], title="t") + to_csv(board)


@pytest.mark.bench
def test_nan_on_bright_sets_reads_partial_in_every_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["bench", "--suite", "smoke", "--quiet", "--no-cache", "--models",
                 "mlp,bright_nan", "--plugin", PLUGIN, "--out", str(out), "--robustness",
                 "none", "--shift", "none", "--attacks", "fgsm"])
    assert code == 1  # incomplete
    err = capsys.readouterr().err
    assert "cell ood bright_nan uniform: model 'bright_nan': clause 'finite' failed" in err
    assert err.splitlines()[-1] + "\n" == (
        "robustbnn: error: incomplete run: 2 cell(s) met NaN or inf logits (bright_nan ood on "
        "uniform, bright_nan ood on glyphs); their rows are replaced by numerical_fault flags, "
        "every number made of them reads 'partial' in the reports (the leaderboard's "
        "'numerical faults' column names them), and the other cells are kept\n")
    md = (out / "leaderboard.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| bright_nan |"))
    assert row.split(" | ")[4] == PARTIAL  # mean OOD AUROC, not 1.0000 (the gaussian set)
    assert NOTE.format(model="bright_nan", cells="ood on glyphs, ood on uniform") in md
    ood_legend = next(line for line in md.splitlines() if line.startswith("* **OOD.**"))
    assert ood_legend.count("NaN or inf logits on ['") == 1
    assert ("'uniform', 'glyphs']" in ood_legend or "'glyphs', 'uniform']" in ood_legend)
    mlp = next(line for line in md.splitlines() if line.startswith("| mlp |"))
    assert mlp.split(" | ")[4].startswith("0.")
    csv = pd.read_csv(out / "leaderboard.csv", keep_default_na=False).set_index("model")
    assert csv.at["bright_nan", "ood_auroc_mean"] == PARTIAL
    assert csv.at["bright_nan", "ood_auroc_mean_measure"] == ""
    assert float(csv.at["mlp", "ood_auroc_mean"]) > 0.5
    board = json.loads((out / "leaderboard.json").read_text())
    nan_row = next(r for r in board["rows"] if r["model"] == "bright_nan")
    assert nan_row["ood_auroc_mean"] is None
    assert nan_row[PARTIAL] == {"ood_auroc_mean": "numerical fault: ood on glyphs, ood on "
                                                  "uniform"}
    html = (out / "leaderboard.html").read_text()
    assert '<td class="num" data-value="">partial</td>' in html
    assert "ood on glyphs, ood on uniform" in html
    ood = (out / "ood.md").read_text()
    assert "| uniform |" in ood and "| fault | fault | fault |" in ood
    assert "bright_nan on glyphs; bright_nan on uniform" in ood
    every = pd.read_csv(out / "all_columns.csv", keep_default_na=False).set_index("model")
    assert every.at["bright_nan", "ood_auroc_mean"] == PARTIAL
    assert every.at["bright_nan", "numerical_faults"] == "ood on glyphs, ood on uniform"
