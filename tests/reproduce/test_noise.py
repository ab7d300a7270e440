"""Each Δ beside the interval of our number: a bootstrap over test examples and seeds, else a
t interval over the seeds, and whether the published value lies inside it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from robustbnn.bench_config import BenchConfig
from robustbnn.report.intervals import Component, interval, seed_interval
from robustbnn.report.published import Entry
from robustbnn.reproduce import Compare, Experiment, Run
from robustbnn.reproduce.report import RunResults, _comparison, compare_frame
from robustbnn.results.examples import attach, group_key, read_run_examples, take, write_examples
from robustbnn.results.schema import Result, setting

TINY = BenchConfig(models=("mlp",), dataset="mnist5k")
MATCH = {"task": "clean", "metric": "accuracy"}
ROW = Result("mlp", 0, "clean", "mnist5k", setting(S_eval=2), "", "accuracy", 0.6)


def _correct(n_right: int, n: int = 100) -> np.ndarray:
    return np.r_[np.ones(n_right), np.zeros(n - n_right)]


def _experiment(*papers: float | None, transform: str = "") -> Experiment:
    """One cell per published value (None: a cell the paper prints no number for)."""
    cells = tuple(
        Compare("MLP", f"acc {i}", "main", "mlp", MATCH,
                None if p is None else Entry("toy", "MLP", f"acc {i}", ("mlp",), MATCH, p,
                                             {"bench.dataset": "mnist5k"}),
                transform=transform)
        for i, p in enumerate(papers))
    return Experiment("toy", "A toy", "nothing", lambda budget, variant: (Run("main", TINY),),
                      lambda variant: cells, {"only": "the one variant"})


def _result(seed: int, correct: np.ndarray | None) -> RunResults:
    """Seed ``seed``'s run: one clean accuracy row, with its examples when given."""
    row = Result(ROW.model, seed, ROW.task, ROW.dataset, ROW.setting, ROW.measure, ROW.metric,
                 float(correct.mean()) if correct is not None else 0.5 + 0.1 * seed)
    examples = {} if correct is None else {
        "mlp": {group_key(row.to_json()): {"accuracy": correct}}}
    return RunResults("main", seed, TINY, [row], {}, examples)


def test_a_published_value_inside_the_bootstrap_interval_is_within_the_noise() -> None:
    correct = _correct(60)
    frame = compare_frame(_experiment(58.0, 40.0, None), "only", [_result(0, correct)])
    lo, hi = interval([[Component("accuracy", {"accuracy": correct})]])
    assert frame["lo"].tolist() == pytest.approx([100 * lo] * 3)
    assert frame["hi"].tolist() == pytest.approx([100 * hi] * 3)
    assert 100 * lo < 58 < 60 < 100 * hi and 100 * lo > 40  # about 50 to 69
    assert frame["inside"].tolist() == ["yes", "no", ""]  # no paper: no Δ to judge
    assert frame["delta"].iloc[:2].tolist() == pytest.approx([2.0, 20.0])


def test_several_seeds_are_resampled_with_their_examples_in_seed_order() -> None:
    a, b = _correct(60), _correct(70)
    frame = compare_frame(_experiment(65.0), "only", [_result(0, a), _result(1, b)])
    expected = interval([[Component("accuracy", {"accuracy": a})],
                         [Component("accuracy", {"accuracy": b})]])
    assert (frame.loc[0, "lo"], frame.loc[0, "hi"]) == pytest.approx(
        tuple(100 * v for v in expected))
    assert frame.loc[0, "mean"] == pytest.approx(65.0) and frame.loc[0, "inside"] == "yes"


def test_the_error_transform_flips_the_interval() -> None:
    correct = _correct(60)
    frame = compare_frame(_experiment(42.0, 60.0, transform="error"), "only",
                          [_result(0, correct)])
    lo, hi = interval([[Component("accuracy", {"accuracy": correct})]])
    assert frame.loc[0, "mean"] == pytest.approx(40.0)
    assert (frame.loc[0, "lo"], frame.loc[0, "hi"]) == pytest.approx((100 * (1 - hi),
                                                                      100 * (1 - lo)))
    assert frame["inside"].tolist() == ["yes", "no"]


def test_rows_without_examples_get_the_t_interval_of_the_seeds() -> None:
    runs = [_result(0, None), _result(1, None), _result(2, None)]  # 50, 60, 70
    frame = compare_frame(_experiment(61.0, 99.0), "only", runs)
    lo, hi = seed_interval([50.0, 60.0, 70.0])
    assert frame["lo"].tolist() == pytest.approx([lo, lo])
    assert frame["hi"].tolist() == pytest.approx([hi, hi])
    assert frame["inside"].tolist() == ["yes", "no"]
    # One seed with examples and one without: the bootstrap needs every seed's.
    mixed = compare_frame(_experiment(61.0), "only", [_result(0, _correct(60)),
                                                     _result(2, None)])
    assert (mixed.loc[0, "lo"], mixed.loc[0, "hi"]) == pytest.approx(seed_interval([60, 70]))


def test_one_seed_without_examples_has_no_interval_and_no_verdict() -> None:
    frame = compare_frame(_experiment(50.0), "only", [_result(0, None)])
    assert math.isnan(frame.loc[0, "lo"]) and math.isnan(frame.loc[0, "hi"])
    assert frame.loc[0, "inside"] == "" and frame.loc[0, "delta"] == pytest.approx(0.0)
    md = "\n".join(_comparison(frame))
    assert "| 50.00 | 50.00 | +0.00 |" in md and "0 of the 0 with an interval" in md


def test_the_markdown_shows_the_interval_and_whether_each_delta_is_inside_it() -> None:
    frame = compare_frame(_experiment(58.0, 40.0), "only", [_result(0, _correct(60))])
    lo, hi = frame.loc[0, "lo"], frame.loc[0, "hi"]
    md = "\n".join(_comparison(frame))
    ours = rf"60.00 \[{lo:.2f}, {hi:.2f}\]"  # md_table escapes the brackets
    assert f"| {ours} | 58.00 | +2.00 (within our 95% interval) |" in md
    assert "| 40.00 | +20.00 (outside) |" in md
    assert "bootstrap over the test examples and the seeds" in md
    assert "2 of 2 published numbers compared under their protocol; 1 of them outside" in md
    two = compare_frame(_experiment(58.0), "only", [_result(0, None), _result(1, None)])
    assert r" ± 7.07 \[" in "\n".join(_comparison(two))  # mean ± std [lo, hi]


def test_the_runner_reads_each_models_examples_from_the_run_folder(tmp_path: Path) -> None:
    row = ROW.to_json() | {"setting": {"S_eval": 2, "eps": 0.1}}
    rows, arrays = take([attach(row, accuracy=_correct(60))])
    write_examples(tmp_path, "mlp", {k.split("/", 1)[1]: v for k, v in arrays.items()})
    results = [Result.from_json(r) for r in rows]
    found = read_run_examples(tmp_path, [r.model for r in
                                         [*results, Result.from_json(rows[0] | {"model": "bbb"})]])
    assert set(found) == {"mlp", "bbb"} and found["bbb"] == {}  # bbb: none written
    res = RunResults("main", 0, TINY, results, {}, found)
    comp = res.component(results[0])
    assert comp is not None and comp.parts["accuracy"].tolist() == _correct(60).tolist()
    assert RunResults("main", 0, TINY, results, {}).component(results[0]) is None
