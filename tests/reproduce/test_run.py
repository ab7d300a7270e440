"""Running an experiment: bench folders per run and seed, a report with Δ only on protocol."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.bench import BenchOptions
from robustbnn.bench_config import BenchConfig
from robustbnn.cli import main
from robustbnn.report.published import Entry
from robustbnn.reproduce import Compare, Experiment, Figure, ReproduceOptions, Run, reproduce

TINY = BenchConfig(models=("mlp",), overrides=("*.hidden=(16,)", "*.epochs=1"), n_train=200,
                   n_test=100, s_eval=2, s_attack=(1,), eps=(0.1, 0.2), attacks=("fgsm",),
                   n_sanity=20, ood=("uniform",), n_ood=50, targeted_steps=0)


def _entry(dataset: str, value: float) -> Entry:
    return Entry("toy", "MLP", "acc", ("mlp",), {"task": "clean", "metric": "accuracy"}, value,
                 {"bench.dataset": dataset, "model.hidden": [16]})


def _experiment() -> Experiment:
    def runs(budget: str, variant: str) -> tuple[Run, ...]:
        return (Run("main", TINY),)

    def compares(variant: str) -> tuple[Compare, ...]:
        return (Compare("MLP", "same protocol", "main", "mlp",
                        {"task": "clean", "metric": "accuracy"}, _entry("mnist5k", 50.0)),
                Compare("MLP", "other protocol", "main", "mlp",
                        {"task": "clean", "metric": "accuracy"}, _entry("mnist", 98.0)),
                Compare("MLP", "error", "main", "mlp", {"task": "clean", "metric": "accuracy"},
                        transform="error"),
                Compare("MLP", "FGSM eps=0.2", "main", "mlp",
                        {"task": "fgsm", "metric": "accuracy", "setting.eps": 0.2}))

    return Experiment("toy", "A toy reproduction", "nothing", runs, compares,
                      {"only": "the one variant"}, seeds=(0, 1),
                      figures=(Figure("acc", "accuracy", "fgsm", "accuracy", "eps"),))


@pytest.mark.bench
def test_reproduce_writes_ours_beside_published_with_delta_only_on_protocol(
        tmp_path: Path) -> None:
    opts = ReproduceOptions(budget="ci", out_dir=tmp_path / "out", runs_dir=tmp_path / "runs",
                            bench=BenchOptions(out_dir=tmp_path, save_scores=False))
    path, failures = reproduce(_experiment(), opts)
    assert failures == []
    for seed in (0, 1):  # ordinary, resumable bench folders
        assert (tmp_path / "runs/toy/ci/only/main" / f"seed{seed}" / "results.jsonl").is_file()
    frame = pd.read_csv(tmp_path / "out/toy.csv")  # an empty "differs" reads as NaN
    same, other, error, fgsm = (frame.iloc[i] for i in range(4))
    assert same["seeds"] == 2 and not math.isnan(same["std"])
    assert same["mean"] == pytest.approx((same["seed0"] + same["seed1"]) / 2)
    assert same["delta"] == pytest.approx(same["mean"] - 50.0) and pd.isna(same["differs"])
    assert math.isnan(other["delta"])
    assert other["differs"] == "bench.dataset: published mnist, this run mnist5k"
    assert error["mean"] == pytest.approx(100 - same["mean"])
    assert 0 <= fgsm["mean"] <= 100
    md = path.read_text()
    assert "Budget **ci**, variant **only**" in md and "seeds [0, 1]" in md
    assert "| MLP | other protocol | mlp |" in md and "| (98.00) | – |" in md
    assert "## Published under another protocol" in md
    assert "![figures/toy_acc.png](figures/toy_acc.png)" in md
    assert (tmp_path / "out/figures/toy_acc.png").stat().st_size > 1000
    assert "- run `main`: dataset=mnist5k, n_train=200" in md

    # A rerun resumes: every cell is reused, the report is the same.
    before = (tmp_path / "out/toy.csv").read_text()
    reproduce(_experiment(), opts)
    assert (tmp_path / "out/toy.csv").read_text() == before


def test_cli_lists_plans_and_names_unknown_experiments(tmp_path: Path, capsys) -> None:
    assert main(["reproduce", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "bhn_table2\tBHN Table 2: anomaly" in listed and "variants: code, test_split" in listed
    assert main(["reproduce", "bhn_table9"]) == 2
    assert "unknown experiment 'bhn_table9'; known: ['bbb_table1'" in capsys.readouterr().err
    assert main(["reproduce"]) == 2
    assert "name an experiment" in capsys.readouterr().err
    assert main(["reproduce", "bhn_table2", "--variant", "nope"]) == 2
    assert "bhn_table2 has no variant 'nope'; its variants: ['code'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "bhn_table2", "--seeds", "0,x"])
    assert "expected comma-separated seeds" in capsys.readouterr().err
