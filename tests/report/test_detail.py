"""OOD detail tables: BHN Table 2/3 layouts with the published numbers and our delta."""

from __future__ import annotations

import pytest

from robustbnn.report.detail import ood_frame, ood_markdown
from robustbnn.report.published import published
from robustbnn.report.schema import Result
from robustbnn.report.store import results_frame


def test_published_numbers_map_our_names_to_the_paper() -> None:
    assert published("mlp", "uniform", "max_prob", "auroc") == 96.99
    assert published("mc_dropout", "notmnist", "max_prob", "aupr_out") == 78.53
    assert published("bhn_realnvp", "cifar10bw", "max_prob", "aupr_in") == 97.25
    assert published("mlp", "uniform", "bald", "auroc") is None  # Table 2 is max prob only
    assert published("mc_dropout", "heldout:4", "bald", "auroc") == 89.34
    assert published("bhn_iaf", "heldout:9", "mean_std", "aupr_out") == 90.85  # BHN 8
    assert published("mlp", "glyphs", "max_prob", "auroc") is None
    assert published("bbb_gaussian", "uniform", "max_prob", "auroc") is None


def _ood(model: str, dataset: str, measure: str, metric: str, value: float,
         seed: int = 0) -> Result:
    return Result(model, seed, "ood", dataset, "S_eval=4", measure, metric, value)


def test_frame_has_mean_std_paper_and_delta() -> None:
    frame = ood_frame(results_frame([
        _ood("mlp", "uniform", "max_prob", "auroc", 0.95, seed=0),
        _ood("mlp", "uniform", "max_prob", "auroc", 0.97, seed=1)]).assign(run=[0, 1]))
    row = frame.iloc[0]
    assert row["mean"] == pytest.approx(0.96) and row["runs"] == 2
    assert row["std"] == pytest.approx(0.0141421356)
    assert row["paper"] == 96.99 and row["delta"] == pytest.approx(96.0 - 96.99)


def test_markdown_shows_paper_and_delta_beside_ours() -> None:
    frame = ood_frame(results_frame([
        _ood("mlp", "uniform", "max_prob", "auroc", 0.95),
        _ood("mlp", "glyphs", "max_prob", "auroc", 0.90),
        _ood("mlp", "uniform", "bald", "auroc", 0.93),
        _ood("mc_dropout", "heldout:4", "bald", "auroc", 0.90),
        _ood("mc_dropout", "heldout:4", "max_prob", "aupr_in", 0.91)]))
    md = ood_markdown(frame)
    assert "| dataset | mlp AUROC | paper | Δ |" in md  # Table 2 layout, max prob
    assert "| uniform | 95.00 | 96.99 | -1.99 |" in md
    assert "| glyphs | 90.00 | – | – |" in md
    assert "### bald\n\n| dataset | mlp AUROC |" in md  # no paper column for BALD
    assert "| class | BALD mc_dropout | paper | Δ |" in md  # Table 3 layout
    assert "| 4 | 90.00 | 89.34 | +0.66 |" in md


def test_attack_tables_show_every_step_size_and_checkpoint() -> None:
    from robustbnn.report.attack_detail import attack_markdown

    fgsm = "S_attack={s};S_eval=4;objective=predictive;label=true;clip=True"
    results = results_frame([
        Result("m", 0, "fgsm", "toy", f"eps={e};" + fgsm.format(s=s), "", "accuracy", v)
        for (e, s), v in {(0.1, 1): 0.5, (0.3, 1): 0.2, (0.1, 32): 0.4, (0.3, 32): 0.1}.items()
    ] + [Result("m", 0, "targeted", "toy", f"step={k};S_attack=1", "", "target_success", v)
         for k, v in ((0, 0.0), (50, 0.25))])
    md = attack_markdown(results)
    assert "| model | S_attack=1 eps=0.1 | S_attack=1 eps=0.3 | S_attack=32 eps=0.1 |" in md
    assert "| m | 0.5000 | 0.2000 | 0.4000 | 0.1000 |" in md
    assert "| m | 0.0000 | 0.2500 |" in md
    assert attack_markdown(results[results["task"] == "ood"]) is None
