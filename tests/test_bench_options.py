"""Bench options that change what a run does: held-out models and --no-save-scores."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.bench import BenchOptions, check_bench, resolve_models, run_bench
from robustbnn.cli import main
from robustbnn.errors import UnknownNameError
from robustbnn.suites import SUITES


@pytest.mark.bench
def test_heldout_classes_retrain_only_the_heldout_models(tmp_path: Path) -> None:
    cfg = dataclasses.replace(SUITES.get("smoke"), ood=("uniform", "heldout:3"),
                              heldout_models=("mc_dropout",), s_attack=(), eps=(),
                              targeted_steps=0)
    run_bench(check_bench(cfg), BenchOptions(out_dir=tmp_path, suite="smoke"))
    results = pd.read_csv(tmp_path / "results.csv", keep_default_na=False)
    ood = results[results["task"] == "ood"]
    assert set(ood.loc[ood["dataset"] == "uniform", "model"]) == {"mlp", "mc_dropout"}
    assert set(ood.loc[ood["dataset"] == "heldout:3", "model"]) == {"mc_dropout"}
    held = results[results["task"] == "heldout_clean"]
    assert held["model"].tolist() == ["mc_dropout"]


def test_unknown_heldout_model_is_rejected_before_training() -> None:
    cfg = dataclasses.replace(SUITES.get("smoke"), heldout_models=("mc_dropot",))
    with pytest.raises(UnknownNameError, match="mc_dropot"):
        resolve_models(cfg)


@pytest.mark.bench
def test_no_save_scores_writes_no_scores_but_the_same_results(tmp_path: Path) -> None:
    common = ["bench", "--suite", "smoke", "--quiet", "--models", "mlp", "--ood", "uniform",
              "--cache-dir", str(tmp_path / "cache")]
    assert main([*common, "--out", str(tmp_path / "a")]) == 0
    assert main([*common, "--out", str(tmp_path / "b"), "--no-save-scores"]) == 0
    assert (tmp_path / "a" / "scores" / "mlp" / "uniform.npz").is_file()
    assert not (tmp_path / "b" / "scores").exists()
    # Byte-identical apart from the wall-clock cost row (seconds per 1,000 predictions).
    a, b = ((tmp_path / run / "results.csv").read_text().splitlines() for run in "ab")
    timing = [line for line in a if ",seconds_per_1000_predictions," in line]
    assert len(timing) == 1 and len(a) > 10
    assert [x for x in a if x not in timing] == [y for y in b if "seconds_per_1000" not in y]


@pytest.mark.bench
def test_no_save_scores_rerun_removes_the_runs_own_stale_scores(tmp_path: Path) -> None:
    args = ["bench", "--suite", "smoke", "--quiet", "--models", "mlp", "--ood", "uniform",
            "--attacks", "fgsm", "--no-cache", "--out", str(tmp_path / "run")]
    assert main(args) == 0
    assert (tmp_path / "run" / "scores" / "mlp" / "uniform.npz").is_file()
    assert main([*args, "--no-save-scores"]) == 0  # same configuration: resumes, all reused
    assert not (tmp_path / "run" / "scores").exists()
