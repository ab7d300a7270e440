"""The leaderboard: its columns, sort order (from HIGHER_IS_BETTER) and mean ± std of runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.cli import main
from robustbnn.errors import ConfigError
from robustbnn.report.leaderboard import leaderboard, to_csv, to_json, to_markdown
from robustbnn.report.render import load_runs
from robustbnn.results.schema import HIGHER_IS_BETTER, MissingKnobError, Result, setting
from robustbnn.results.store import results_frame

from ._runs import pgd_rows, rows, write_run

MODELS = {  # distinct orders per column, so a wrong direction shows
    "a": dict(acc=0.95, nll=0.20, ece=0.09, fgsm=0.3, success=0.9, det=0.60, ood=0.70,
              seconds=3.0, params=300),
    "b": dict(acc=0.90, nll=0.40, ece=0.02, fgsm=0.6, success=0.1, det=0.80, ood=0.90,
              seconds=1.0, params=100),
    "c": dict(acc=0.85, nll=0.30, ece=0.05, fgsm=0.4, success=0.5, det=0.70, ood=0.80,
              seconds=2.0, params=200),
}


def _results() -> pd.DataFrame:
    return results_frame([r for name, kw in MODELS.items() for r in rows(name, **kw)])


def test_columns_are_the_issue_list_in_order() -> None:
    board = leaderboard(_results())
    assert [c.key for c in board.columns] == [
        "clean_accuracy", "clean_nll", "clean_ece",
        "fgsm_accuracy_eps0.1_S1", "fgsm_accuracy_eps0.1_S32",
        "fgsm_accuracy_eps0.3_S1", "fgsm_accuracy_eps0.3_S32",
        "targeted_success_step100",
        "adversary_detection_eps0.1_S32", "adversary_detection_eps0.1_S32_measure",
        "ood_auroc_mean", "ood_auroc_mean_measure",
        "seconds_per_1000_predictions", "parameters", "sanity"]
    assert list(board.table.index) == ["a", "b", "c"]  # default: clean accuracy, best first
    assert board.table.at["b", "ood_auroc_mean"] == pytest.approx(0.90)  # mean of 0.92, 0.88
    assert board.table.at["b", "ood_auroc_mean_measure"] == "bald"  # the better measure
    assert board.table.at["c", "adversary_detection_eps0.1_S32"] == pytest.approx(0.70)
    assert board.table.at["a", "targeted_success_step100"] == pytest.approx(0.9)
    assert board.table.at["a", "sanity"] == "ok"


@pytest.mark.parametrize("key", ["clean_accuracy", "clean_nll", "clean_ece",
                                 "fgsm_accuracy_eps0.1_S32", "targeted_success_step100",
                                 "adversary_detection_eps0.1_S32", "ood_auroc_mean",
                                 "seconds_per_1000_predictions", "parameters"])
def test_sort_puts_the_best_first_by_higher_is_better(key: str) -> None:
    board = leaderboard(_results(), sort=key)
    values = board.table[key].tolist()
    higher = HIGHER_IS_BETTER[board.column(key).metric]
    assert values == sorted(values, reverse=higher)
    assert len(set(values)) == 3  # the order is decided by the column, not by ties
    direction = "higher" if higher else "lower"
    assert board.order_text().endswith(f"({direction} is better, best first).")


def test_unknown_sort_column_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="--sort nope: no such leaderboard column.*clean_nll"):
        leaderboard(_results(), sort="nope")


def test_two_runs_give_mean_and_sample_std(tmp_path: Path) -> None:
    write_run(tmp_path / "s0", rows("m", seed=0, acc=0.90, params=10), seed=0)
    write_run(tmp_path / "s1", rows("m", seed=1, acc=0.80, params=10), seed=1)
    results, runs = load_runs([tmp_path / "s0", tmp_path / "s1"])
    board = leaderboard(results)
    # By hand: mean (0.9 + 0.8) / 2 = 0.85; sample std sqrt(((0.05)² + (0.05)²) / 1) = 0.0707...
    assert board.runs == 2 and board.seeds == [0, 1]
    assert board.table.at["m", "clean_accuracy"] == pytest.approx(0.85)
    assert board.table.at["m", "clean_accuracy_std"] == pytest.approx(math.sqrt(0.005))
    assert board.table.at["m", "parameters_std"] == 0
    md = to_markdown(board, ["legend"], title="t")
    # Two seeds and no examples: the t interval, 0.85 ± 12.71 · 0.05, cut to [0, 1].
    assert r"| m | 0.8500 \[0.215, 1.000\] |" in md and "Mean over 2 runs" in md
    csv = pd.read_csv(pd.io.common.StringIO(to_csv(board)))
    assert csv.loc[0, "clean_accuracy"] == pytest.approx(0.85)
    assert csv.loc[0, "clean_accuracy_std"] == pytest.approx(0.0707106781)
    payload = json.loads(to_json(board, ["legend"], title="t"))
    assert payload["rows"][0]["clean_accuracy"] == pytest.approx(0.85)
    assert payload["rows"][0]["parameters"] == 10 and payload["seeds"] == [0, 1]


def _with_ood(seed: int, values: dict[str, float]) -> pd.DataFrame:
    """Model ``m`` whose OOD AUROC per measure is ``values`` on both sets."""
    out = [r for r in rows("m", seed=seed) if r.task != "ood"]
    knobs = setting(S_eval=4, n_in=10, n_out=10)
    out += [Result("m", seed, "ood", dataset, knobs, measure, "auroc", v)
            for dataset in ("uniform", "gaussian") for measure, v in values.items()]
    return results_frame(out).assign(run=seed)


def test_best_measure_is_chosen_on_the_mean_over_runs() -> None:
    # Run 0 prefers max_prob slightly, run 1 prefers bald by far: bald wins on the mean.
    frame = pd.concat([_with_ood(0, {"bald": 0.70, "max_prob": 0.72}),
                       _with_ood(1, {"bald": 0.90, "max_prob": 0.60})])
    board = leaderboard(frame)
    assert board.table.at["m", "ood_auroc_mean_measure"] == "bald"
    assert board.table.at["m", "ood_auroc_mean"] == pytest.approx(0.80)
    assert board.table.at["m", "ood_auroc_mean_std"] == pytest.approx(math.sqrt(0.02))


def test_json_and_csv_keep_numbers_as_numbers() -> None:
    board = leaderboard(_results())
    payload = json.loads(to_json(board, ["x"], title="t"))
    row = payload["rows"][0]
    assert isinstance(row["clean_accuracy"], float) and isinstance(row["parameters"], int)
    directions = {c["key"]: c["higher_is_better"] for c in payload["columns"]}
    assert directions["clean_nll"] is False and directions["sanity"] is None
    csv = pd.read_csv(pd.io.common.StringIO(to_csv(board)))
    assert csv["clean_accuracy"].dtype == "float64" and csv["parameters"].dtype == "int64"


def test_pgd_columns_take_the_largest_s_attack_at_each_eps() -> None:
    acc = {(0.1, 1): 0.5, (0.1, 32): 0.4, (0.3, 1): 0.2, (0.3, 32): 0.1, (0.2, 8): 0.3}
    frame = results_frame(rows("a") + pgd_rows("a", acc=acc)
                          + rows("b") + pgd_rows("b", acc={k: v / 2 for k, v in acc.items()}))
    board = leaderboard(frame, sort="pgd_accuracy_eps0.3_S32")
    keys = [c.key for c in board.columns]
    pgd = ["pgd_accuracy_eps0.1_S32", "pgd_accuracy_eps0.2_S8", "pgd_accuracy_eps0.3_S32"]
    assert keys[keys.index("fgsm_accuracy_eps0.3_S32") + 1:keys.index("targeted_success_step100")
                ] == pgd
    assert board.column("pgd_accuracy_eps0.3_S32").title == "PGD acc ε=0.3 S=32"
    assert board.table.at["a", "pgd_accuracy_eps0.1_S32"] == pytest.approx(0.4)
    assert board.table.at["b", "pgd_accuracy_eps0.3_S32"] == pytest.approx(0.05)
    assert board.table.at["a", "pgd_accuracy_eps0.2_S8"] == pytest.approx(0.3)
    assert list(board.table.index) == ["a", "b"]  # accuracy: higher is better
    payload = json.loads(to_json(board, [], title="t"))
    assert payload["rows"][0]["pgd_accuracy_eps0.3_S32"] == pytest.approx(0.1)
    assert next(c for c in payload["columns"] if c["key"] == "pgd_accuracy_eps0.3_S32"
                )["higher_is_better"] is True


def test_a_plugin_attack_with_the_same_rows_gets_its_own_columns() -> None:
    frame = results_frame(rows("a") + pgd_rows("a", task="square", acc={(0.1, 4): 0.6}))
    board = leaderboard(frame)
    assert board.column("square_accuracy_eps0.1_S4").title == "square acc ε=0.1 S=4"
    assert board.table.at["a", "square_accuracy_eps0.1_S4"] == pytest.approx(0.6)
    assert not any(c.key.startswith("pgd_") for c in board.columns)


def test_a_renamed_knob_is_an_error_not_a_missing_column(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]):
    renamed = [Result(r.model, r.seed, r.task, r.dataset,
                      {("epsilon" if k == "eps" else k): v for k, v in r.setting.items()},
                      r.measure, r.metric, r.value) if r.task == "fgsm" else r
               for r in rows("a")]
    with pytest.raises(MissingKnobError, match="'eps'") as err:
        leaderboard(results_frame(renamed))
    assert "['fgsm']" in str(err.value) and "'epsilon'" in str(err.value)
    run = write_run(tmp_path / "run", renamed)
    assert main(["report", str(run), "--no-figures"]) == 1
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "'eps'" in line and "rerun robustbnn bench" in line
