"""The headline leaderboard, the aspect tables and the closing summary."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.cli.report import closing_summary
from robustbnn.report.aspects import aspect_boards
from robustbnn.report.column import ASPECTS
from robustbnn.report.headline import MAX_COLUMNS, headline
from robustbnn.report.leaderboard import UPPER_BOUND_MARK, leaderboard
from robustbnn.report.render import render
from robustbnn.report.summary import summary_table
from robustbnn.results import names as N
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import results_frame, write_json

from ._runs import fidelity_rows, rows, write_run


def robust_rows(model: str, *, allk: float, bound: bool = False, adaptive: float = 0.3,
                worst: float = 0.6, corrupted: float | None = 0.7, seed: int = 0,
                rotated: bool = False) -> list[Result]:
    """The robustness and shift rows of one model, as a default-suite run writes them."""

    def row(task: str, measure: str, metric: str, value: float, **knobs: object) -> Result:
        return Result(model, seed, task, "toy", setting(**knobs), measure, metric, value)

    out = [row(N.WORST_OF_K, "", N.ALL_K_ACCURACY, allk, eps=0.1, k=10, S_attack=16, steps=40),
           row(N.WORST_OF_K, "", N.ALL_K_ACCURACY, allk / 4, eps=0.3, k=10, S_attack=16,
               steps=40),
           row(N.ROBUST_FLAGS, "eot_not_converged", N.RAISED, float(bound), eps=0.1, tol=0.01),
           row(N.ROBUST_FLAGS, "eot_not_converged", N.RAISED, 0.0, eps=0.3, tol=0.01)]
    for measure, bonus in (("bald", 0.0), ("max_prob", 0.1)):
        for flag, value in ((True, adaptive + bonus), (False, 0.9)):
            out.append(row(N.DETECTOR_AWARE, measure, N.DETECTION_AWARE_ACCURACY, value,
                           eps=0.1, adaptive=flag, fpr=0.05))
        for eps, value in ((0.0, 0.9), (0.1, worst - bonus)):
            out.append(row(N.ADV_OOD, measure, N.AUROC, value, eps=eps))
    if corrupted is not None:
        out += [row(N.SHIFT, "", N.ACCURACY, corrupted, shift=N.ShiftKind.CORRUPTED,
                    corruption="shot_noise", S_eval=4, n=50)]
    if rotated:
        out += [row(N.SHIFT, "", N.ACCURACY, 0.9 - angle / 200, shift=N.ShiftKind.ROTATED,
                    angle=angle, S_eval=4, n=50) for angle in (0, 90, 180)]
    return out


# Clean accuracy and robust accuracy disagree on the order, so the default sort shows.
MODELS = {"a": dict(acc=0.95, allk=0.10, bound=True), "b": dict(acc=0.90, allk=0.30),
          "c": dict(acc=0.85, allk=0.20, bound=True)}


def _results() -> pd.DataFrame:
    return results_frame([r for m, kw in MODELS.items()
                          for r in rows(m, acc=kw["acc"])
                          + robust_rows(m, allk=kw["allk"], bound=kw.get("bound", False))
                          + fidelity_rows(m, tv=kw["allk"])])


def _run(tmp_path: Path) -> Path:
    run = write_run(tmp_path / "run", [r for m, kw in MODELS.items()
                                       for r in rows(m, acc=kw["acc"])
                                       + robust_rows(m, allk=kw["allk"],
                                                     bound=kw.get("bound", False))
                                       + fidelity_rows(m, tv=kw["allk"])])
    meta = json.loads((run / "run.json").read_text())
    write_json(run / "run.json", {**meta, "models": {"a": {"family": "variational"},
                                                     "b": {"family": "ensemble"}}})
    return run


def test_headline_has_at_most_ten_columns_sorted_by_the_honest_robust_accuracy() -> None:
    board = headline(leaderboard(_results()), {"a": "variational"})
    assert [c.key for c in board.columns] == [
        "family", "clean_accuracy", "clean_nll", "robust_accuracy_allk_eps0.1",
        "detection_aware_eps0.1", "ood_auroc_mean", "adv_ood_auroc_eps0.1",
        "corrupted_accuracy_mean", "seconds_per_1000_predictions"]
    assert 1 + len(board.columns) <= MAX_COLUMNS  # counting the model name
    assert board.sort == "robust_accuracy_allk_eps0.1"
    assert list(board.table.index) == ["b", "c", "a"]  # 0.30, 0.20, 0.10; not clean accuracy
    assert board.order_text().startswith("Sorted by PGD-EOT all-10 acc ε=0.1 (S=16×40)")
    assert list(board.table["family"]) == ["other", "other", "variational"]


def test_the_upper_bound_mark_is_exactly_on_upper_bound_rows(tmp_path: Path) -> None:
    run = _run(tmp_path)
    render([run], run, figures=False)
    lines = (run / "leaderboard.md").read_text().splitlines()
    header = next(line for line in lines if line.startswith("| model |")).split(" | ")
    at = next(i for i, h in enumerate(header) if h.startswith("PGD-EOT all-10 acc ε=0.1"))
    cells = {line.split(" | ")[0][2:]: line.split(" | ")[at] for line in lines
             if line.startswith(("| a |", "| b |", "| c |"))}
    assert cells == {"a": f"0.1000{UPPER_BOUND_MARK}", "b": "0.3000",
                     "c": f"0.2000{UPPER_BOUND_MARK}"}
    assert any(line.startswith(f"* **{UPPER_BOUND_MARK}** marks an upper bound") for line in lines)
    assert sum(UPPER_BOUND_MARK in line for line in lines if line.startswith("| ")) == 2
    csv = pd.read_csv(run / "leaderboard.csv").set_index("model")
    assert csv["robust_accuracy_allk_eps0.1"].dtype == "float64"  # numbers stay numbers
    assert csv.loc["a", "robust_accuracy_allk_eps0.1_bound"].startswith("upper bound")
    assert csv.loc["b", "robust_accuracy_allk_eps0.1_bound"] == "converged"
    assert csv.loc["a", "ood_auroc_mean_measure"] == "bald"
    assert list(csv.index) == ["b", "c", "a"] and csv.loc["a", "family"] == "variational"
    payload = json.loads((run / "leaderboard.json").read_text())
    row = payload["rows"][-1]
    assert row["model"] == "a" and row["robust_accuracy_allk_eps0.1"] == 0.1
    assert row["robust_accuracy_allk_eps0.1_bound"].startswith("upper bound")
    assert "robust_accuracy_allk_eps0.1_bound" in [c["key"] for c in payload["carried"]]
    assert "| b | ensemble | 0.9000 | 0.3000 | 0.3000 | 0.4000 (max_prob) | 0.8000 (bald) | " \
        "0.6000 (bald) | 0.7000 | 1.000 |" in lines


def test_every_column_lands_in_exactly_one_aspect_table(tmp_path: Path) -> None:
    board = leaderboard(_results())
    tables = aspect_boards(board)
    assert set(tables) <= set(ASPECTS) and len(tables) == len(ASPECTS)
    keys = [c.key for t in tables.values() for c in t.columns]
    assert sorted(keys) == sorted(c.key for c in board.columns)  # each once, none lost
    run = _run(tmp_path)
    render([run], run, figures=False)
    full = pd.read_csv(run / "all_columns.csv").set_index("model")
    seen: list[str] = []
    for aspect in tables:
        part = pd.read_csv(run / f"table_{aspect}.csv").set_index("model")
        pd.testing.assert_frame_equal(part, full[part.columns])  # the same numbers
        seen += list(part.columns)
        assert (run / f"table_{aspect}.md").read_text().startswith(
            f"# robustbnn leaderboard: {ASPECTS[aspect]}\n")
    assert sorted(seen) == sorted(full.columns)
    md = (run / "leaderboard.md").read_text()
    assert all(f"(table_{aspect}.md)" in md for aspect in tables)
    robustness = (run / "table_robustness.md").read_text()
    assert "upper bound (eot_not_converged)" in robustness and UPPER_BOUND_MARK not in robustness


def test_a_run_without_robustness_sorts_by_clean_accuracy_and_shows_what_it_has() -> None:
    frame = results_frame([r for m, acc in (("a", 0.8), ("b", 0.9)) for r in rows(m, acc=acc)]
                          + [r for r in robust_rows("a", allk=0.1, corrupted=None, rotated=True)
                             if r.task == N.SHIFT])
    board = headline(leaderboard(frame), {})
    assert [c.key for c in board.columns] == [
        "family", "clean_accuracy", "clean_nll", "ood_auroc_mean", "rotated_accuracy_auc",
        "seconds_per_1000_predictions"]
    assert board.sort == "clean_accuracy" and list(board.table.index) == ["b", "a"]


def test_sort_by_a_column_outside_the_headline_carries_it() -> None:
    board = headline(leaderboard(_results(), sort="fgsm_accuracy_eps0.1_S32"), {})
    assert "fgsm_accuracy_eps0.1_S32" not in [c.key for c in board.columns]
    assert board.order_text().startswith("Sorted by FGSM acc ε=0.1 S=32")
    assert "fgsm_accuracy_eps0.1_S32" in [c.key for c in board.carried]  # for the order text


def test_the_closing_summary_prints_the_headline_and_where_the_reports_are(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(tmp_path)
    render([run], run, figures=False)
    text = summary_table(*_load(run))
    lines = text.splitlines()
    assert lines[0].startswith("Sorted by PGD-EOT all-10 acc ε=0.1")
    assert [line.split()[0] for line in lines[4:7]] == ["b", "c", "a"]
    assert f"0.1000{UPPER_BOUND_MARK}" in lines[6] and "(bald)" not in text
    assert max(len(line) for line in lines) <= 120
    monkeypatch.setattr("sys.stdout", io.StringIO())
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    closing_summary(argparse.Namespace(quiet=False), [run], run, f"wrote the reports to {run}/")
    out = __import__("sys").stdout.getvalue()
    assert out.startswith(text)
    assert f"wrote the reports to {run}/:\n  leaderboard  {run}/leaderboard.md, " \
           f"{run}/leaderboard.html (and .csv, .json)\n  by aspect    {run}/table_attacks.md, " \
           f"{run}/table_robustness.md, " in out
    assert f"  all columns  {run}/all_columns.csv (and .json)\n" in out
    monkeypatch.setattr("sys.stdout", io.StringIO())
    closing_summary(argparse.Namespace(quiet=True), [run], run, "wrote")
    assert __import__("sys").stdout.getvalue() == ""


def _load(run: Path) -> tuple[pd.DataFrame, list[dict]]:
    from robustbnn.report.render import load_runs

    return load_runs([run])


def test_every_aspect_file_is_one_the_render_may_remove_again() -> None:
    from robustbnn.report.aspects import aspect_file
    from robustbnn.results.manifest import is_ours

    names = [f"{aspect_file(a)}.{ext}" for a in ASPECTS for ext in ("md", "csv")]
    assert all(is_ours(name) for name in [*names, "all_columns.csv", "all_columns.json"])


def test_hostile_model_and_family_names_render_no_link_in_any_table(tmp_path: Path) -> None:
    from ._commonmark import links

    model, family = "<img src=x>[m](http://e.x)", "[f](http://e.x)"
    run = write_run(tmp_path / "run", rows(model) + robust_rows(model, allk=0.2, bound=True))
    meta = json.loads((run / "run.json").read_text())
    write_json(run / "run.json", {**meta, "models": {model: {"family": family}}})
    render([run], run, figures=False)
    for path in [run / "leaderboard.md", *run.glob("table_*.md")]:
        md = path.read_text(encoding="utf-8")
        assert [f for f in links(md) if "e.x" in f] == [], path.name
        assert "\\[m\\](http\\://e.x)" in md, path.name
    assert "\\[f\\](http\\://e.x)" in (run / "leaderboard.md").read_text(encoding="utf-8")


def test_an_aspect_table_of_an_earlier_render_goes_when_its_columns_do(tmp_path: Path) -> None:
    run = _run(tmp_path)
    render([run], tmp_path / "out", figures=False)
    assert (tmp_path / "out" / "table_robustness.md").is_file()
    plain = write_run(tmp_path / "plain", rows("a"))
    render([plain], tmp_path / "out", figures=False)
    assert not (tmp_path / "out" / "table_robustness.md").exists()
    assert not (tmp_path / "out" / "table_robustness.csv").exists()
    assert "table_robustness.md" not in (tmp_path / "out" / "leaderboard.md").read_text()
