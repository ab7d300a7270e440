"""OOD detail tables: BHN Table 2/3 layouts with the published numbers and our delta."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from robustbnn.report.detail import ood_frame, ood_markdown
from robustbnn.report.published import find
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import results_frame

from ._runs import pgd_rows, rows, write_run


def _value(model: str, **match: str) -> float | None:
    found = find(model, **match)
    return found[0].value if found else None


def test_published_numbers_map_our_names_to_the_paper() -> None:
    def ood(model: str, dataset: str, measure: str, metric: str) -> float | None:
        return _value(model, task="ood", dataset=dataset, measure=measure, metric=metric)

    assert ood("mlp", "uniform", "max_prob", "auroc") == 96.99
    assert ood("mc_dropout", "notmnist", "max_prob", "aupr_out") == 78.53
    assert ood("bhn_realnvp", "cifar10bw", "max_prob", "aupr_in") == 97.25
    assert ood("mlp", "uniform", "bald", "auroc") is None  # Table 2 is max prob only
    assert ood("mc_dropout", "heldout:4", "bald", "auroc") == 89.34
    found = find("bhn_iaf", task="ood", dataset="heldout:9", measure="mean_std",
                 metric="aupr_out")
    assert [e.value for e in found] == [88.72, 90.85]  # BHN 4, 8
    assert ood("mlp", "glyphs", "max_prob", "auroc") is None
    assert ood("bbb_gaussian", "uniform", "max_prob", "auroc") is None


def _ood(model: str, dataset: str, measure: str, metric: str, value: float,
         seed: int = 0) -> Result:
    return Result(model, seed, "ood", dataset, setting(S_eval=100, n_in=10000, n_out=10000),
                  measure, metric, value)


# run.json of a run under BHN Table 2's protocol, and of a default-suite-like one.
TABLE2_RUN = {"config": {"dataset": "mnist", "n_train": 0, "ood_in_split": "val",
                         "ood_preprocessing": "bhn_reference", "s_eval": 100},
              "models": {m: {"config": {"hidden": [256, 256, 256], "activation": "gelu",
                                        "init": "glorot"}} for m in ("mlp", "mc_dropout")}}
OTHER_RUN = {"config": {"dataset": "mnist5k", "n_train": 0, "ood_in_split": "test",
                        "ood_preprocessing": "unit", "s_eval": 100},
             "models": {m: {"config": {"hidden": [400, 400], "activation": "relu",
                                       "init": "torch"}} for m in ("mlp", "mc_dropout")}}


def test_frame_has_mean_std_paper_and_delta_under_the_papers_protocol() -> None:
    frame = ood_frame(results_frame([
        _ood("mlp", "uniform", "max_prob", "auroc", 0.95, seed=0),
        _ood("mlp", "uniform", "max_prob", "auroc", 0.97, seed=1)]).assign(run=[0, 1]),
        [TABLE2_RUN, TABLE2_RUN])
    row = frame.iloc[0]
    assert row["mean"] == pytest.approx(0.96) and row["runs"] == 2
    assert row["std"] == pytest.approx(0.0141421356)
    assert row["paper"] == 96.99 and row["delta"] == pytest.approx(96.0 - 96.99)
    assert row["differs"] == "" and row["table"] == "bhn_table2"


def test_another_protocol_gets_the_published_value_as_a_reference_never_a_delta() -> None:
    frame = ood_frame(results_frame([_ood("mlp", "uniform", "max_prob", "auroc", 0.95)]),
                      [OTHER_RUN])
    row = frame.iloc[0]
    assert row["paper"] == 96.99 and math.isnan(row["delta"])
    assert "bench.dataset: published mnist, this run mnist5k" in row["differs"]
    assert "model.activation: published gelu, this run relu" in row["differs"]
    md = ood_markdown(frame)
    assert "| uniform | 95.00 | (96.99) | – |" in md
    assert "## Published under another protocol" in md
    assert "- mlp, `bhn_table2`: bench.dataset: published mnist, this run mnist5k" in md


def test_one_run_off_protocol_removes_the_delta_of_the_mean() -> None:
    frame = ood_frame(results_frame([
        _ood("mlp", "uniform", "max_prob", "auroc", 0.95, seed=0),
        _ood("mlp", "uniform", "max_prob", "auroc", 0.97, seed=1)]).assign(run=[0, 1]),
        [TABLE2_RUN, OTHER_RUN])
    assert math.isnan(frame.iloc[0]["delta"])


def test_pr_compares_only_at_the_papers_counts() -> None:
    def pr(n_out: int) -> float:
        row = Result("mlp", 0, "ood", "notmnist", setting(S_eval=100, n_in=10000, n_out=n_out),
                     "max_prob", "aupr_out", 0.40)
        return ood_frame(results_frame([row]), [TABLE2_RUN]).iloc[0]["delta"]

    assert pr(1000) == pytest.approx(40.0 - 39.70)
    assert math.isnan(pr(10000))


def test_markdown_shows_paper_and_delta_beside_ours() -> None:
    frame = ood_frame(results_frame([
        _ood("mlp", "uniform", "max_prob", "auroc", 0.95),
        _ood("mlp", "glyphs", "max_prob", "auroc", 0.90),
        _ood("mlp", "uniform", "bald", "auroc", 0.93),
        _ood("mc_dropout", "heldout:4", "bald", "auroc", 0.90),
        _ood("mc_dropout", "heldout:4", "max_prob", "aupr_in", 0.91)]), [TABLE2_RUN])
    md = ood_markdown(frame)
    assert "| dataset | mlp AUROC | paper | Δ |" in md  # Table 2 layout, max prob
    assert "| uniform | 95.00 | 96.99 | -1.99 |" in md
    assert "| glyphs | 90.00 | – | – |" in md
    assert "### bald\n\n| dataset | mlp AUROC |" in md  # no paper column for BALD
    assert "| class | BALD mc_dropout | paper | Δ |" in md  # Table 3 layout
    assert "| 4 | 90.00 | 89.34 | +0.66 |" in md


def test_attack_tables_show_every_step_size_and_checkpoint() -> None:
    from robustbnn.report.attack_detail import attack_markdown

    def fgsm(e: float, s: int) -> dict:
        return setting(eps=e, S_attack=s, S_eval=4, objective="predictive", label="true",
                       clip=True)

    results = results_frame([
        Result("m", 0, "fgsm", "toy", fgsm(e, s), "", "accuracy", v)
        for (e, s), v in {(0.1, 1): 0.5, (0.3, 1): 0.2, (0.1, 32): 0.4, (0.3, 32): 0.1}.items()
    ] + [Result("m", 0, "targeted", "toy", setting(step=k, S_attack=1), "", "target_success", v)
         for k, v in ((0, 0.0), (50, 0.25))])
    md = attack_markdown(results)
    assert "| model | S_attack=1 eps=0.1 | S_attack=1 eps=0.3 | S_attack=32 eps=0.1 |" in md
    assert "| m | 0.5000 | 0.2000 | 0.4000 | 0.1000 |" in md
    assert "| m | 0.0000 | 0.2500 |" in md
    assert attack_markdown(results[results["task"] == "ood"]) is None


def test_attack_tables_cover_pgd_and_plugin_attacks() -> None:
    from robustbnn.report.attack_detail import attack_markdown

    results = results_frame(pgd_rows("m") + pgd_rows("m", task="square", acc={(0.05, 2): 0.7}))
    md = attack_markdown(results)
    assert "## PGD accuracy\n\n| model | S_attack=1 eps=0.1 | S_attack=1 eps=0.3 | " \
           "S_attack=32 eps=0.1 | S_attack=32 eps=0.3 |\n" in md
    assert "| m | 0.5000 | 0.2000 | 0.4000 | 0.1000 |" in md
    assert "## PGD adversary detection AUROC" in md
    assert "| m | max_prob | 0.6000 | 0.5700 | 0.5900 | 0.5600 |" in md  # 0.6 + acc/10 - 0.05
    assert ("## square accuracy\n\n| model | S_attack=2 eps=0.05 |\n|---|---:|\n"
            "| m | 0.7000 |") in md
    assert "FGSM" not in md.split("\n## ", 1)[1]  # no FGSM rows, no FGSM table


@pytest.mark.bench
def test_render_draws_one_accuracy_figure_per_attack_task(tmp_path: Path) -> None:
    from robustbnn.report.render import render

    run = write_run(tmp_path / "run", rows("a") + pgd_rows("a") + pgd_rows("b")
                    + pgd_rows("a", task="square"))
    render([run], run)
    figures = {p.name for p in (run / "figures").iterdir()}
    assert {"pgd_accuracy.png", "square_accuracy.png", "fgsm_accuracy.png"} <= figures
    board = json.loads((run / "all_columns.json").read_text())
    assert "pgd_accuracy_eps0.3_S32" in [c["key"] for c in board["columns"]]
    legend = " ".join(board["legend"])
    assert "**PGD.** L∞ projected gradient descent" in legend
    assert "40 steps of size 0.01, 1 restart(s)" in legend and "S_attack ∈ {1, 32}" in legend
    assert "**square.** Plug-in attack `square`" in legend
    page = (run / "leaderboard.html").read_text()  # embedded as its smaller file, PNG or SVG
    assert re.search(r'data-file="pgd_accuracy\.(png|svg)"', page)
