"""Plug-in uncertainty measures in the reports: a plug-in measure that becomes a model's best
OOD measure is named in the headline and drawn in the ROC figures, by ``bench`` and by
``robustbnn report``; a measure the run kept no per-example scores for is left out of a
figure with the reason said."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from robustbnn.cli import main
from robustbnn.report.figures import write_figures
from robustbnn.results.scores import write_scores
from robustbnn.results.store import read_results

from ._runs import rows, write_run

PLUGIN = "tests.report._oracle_measure"  # registers ORACLE; imported by --plugin only
ORACLE = "oracle"


@pytest.fixture
def oracle_plugin() -> None:
    """Import ``--plugin tests.report._oracle_measure`` afresh in the test, and forget it
    after (the ``thirdparty`` fixture forgets its registration)."""
    sys.modules.pop(PLUGIN, None)
    yield
    sys.modules.pop(PLUGIN, None)


def _measure(out: Path, model: str) -> str:
    """The model's headline OOD measure in ``all_columns.csv``."""
    table = pd.read_csv(out / "all_columns.csv", keep_default_na=False, index_col="model")
    return str(table.loc[model, "ood_auroc_mean_measure"])


@pytest.mark.bench
def test_a_winning_plug_in_measure_is_reported_and_drawn_by_bench_and_report(
        thirdparty, oracle_plugin: None, tmp_path: Path,  # noqa: ANN001
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["bench", "--suite", "smoke", "--quiet", "--models", "mlp", "--ood", "uniform",
                 "--plugin", PLUGIN, "--out", str(out), "--cache-dir", str(tmp_path / "cache")]
                ) == 0, capsys.readouterr().err
    # Two plug-in measures: the installed package's (entry point) and the winner (--plugin).
    results = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert {thirdparty.measure, ORACLE} <= set(results["measure"])
    assert _measure(out, "mlp") == ORACLE
    figures = {p.name for p in (out / "figures").iterdir()}
    assert {"ood_roc.png", "ood_roc.svg", "ood_mlp.png"} <= figures
    again = tmp_path / "again"
    assert main(["report", "--quiet", str(out), "--out", str(again)]) == 0, \
        capsys.readouterr().err
    assert f"({ORACLE})" in (again / "leaderboard.md").read_text(encoding="utf-8")
    assert {p.name for p in (again / "figures").iterdir()} == figures


def test_a_measure_without_per_example_scores_is_left_out_of_the_figures_with_a_reason(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # Rows without examples (an older run) whose best measure, bald, is not in the score
    # files: the ROC figures draw what they have and say what they left out.
    write_run(tmp_path, rows("mlp"))
    for dataset in ("uniform", "gaussian"):
        write_scores(tmp_path, "mlp", dataset, {"max_prob": np.array([0.1, 0.2]),
                                                "predictive_entropy": np.array([0.1, 0.2])},
                     {"max_prob": np.array([0.8, 0.9]),
                      "predictive_entropy": np.array([0.7, 0.9])})
    with caplog.at_level(logging.WARNING, logger="robustbnn.report"):
        written = write_figures(read_results(tmp_path), tmp_path)
    names = {p.name for p in written}
    assert {"ood_roc.png", "ood_mlp.png"} <= names
    assert "no per-example scores of measure 'bald' for mlp on uniform" in caplog.text
